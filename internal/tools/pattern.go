package tools

import "strings"

// PatternSpecificity tells how precisely a tool pattern matches a tool id, for
// the pattern language shared by routing rules, permissions and discover:
// "*" (every tool), "ns" or "ns:*" (a namespace), "ns:action" (one tool).
// It returns 0 for no match and more for a more specific match, so that where
// several patterns match, the most specific one decides.
func PatternSpecificity(pattern, id string) int {
	if pattern == "*" {
		return 1
	}
	ns, action := Split(id)
	pns, paction, hasAction := strings.Cut(pattern, ":")
	switch {
	case pns != ns:
		return 0
	case !hasAction || paction == "*":
		return 2
	case paction == action:
		return 3
	}
	return 0
}

// MatchPattern reports whether pattern matches the tool id.
func MatchPattern(pattern, id string) bool { return PatternSpecificity(pattern, id) > 0 }
