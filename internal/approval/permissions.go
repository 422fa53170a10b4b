package approval

import (
	"errors"
	"fmt"
	"strings"

	"github.com/pml-go/pml/internal/tools"
)

// Decision is the outcome of a permission check for one tool.
type Decision string

// The three decisions of permission resolution (docs/configuration.md).
const (
	Allow Decision = "allow" // run without asking
	Deny  Decision = "deny"  // refuse (PERMISSION_DENIED)
	Ask   Decision = "ask"   // pause for a person to approve (HIL)
)

// Permissions is the "permissions" object of .pml.json. Each list holds
// patterns: "*" (every tool), "ns" or "ns:*" (every tool of a namespace) and
// "ns:action" (one tool).
type Permissions struct {
	Allow []string `json:"allow"`
	Deny  []string `json:"deny"`
	Ask   []string `json:"ask"`
}

// Decide resolves toolID ("ns:action") in this order: a match in deny
// wins, then allow, then ask; a tool in no list is asked about. List order
// beats pattern specificity on purpose: a deny of "shell" cannot be undone by
// allowing "shell:exec", so a deny entry always means what it says.
func (p Permissions) Decide(toolID string) Decision {
	switch {
	case matchesAny(p.Deny, toolID):
		return Deny
	case matchesAny(p.Allow, toolID):
		return Allow
	default:
		return Ask
	}
}

// Validate reports every malformed pattern, naming the list and the pattern.
func (p Permissions) Validate() error {
	var errs []error
	for _, l := range []struct {
		name     string
		patterns []string
	}{{"allow", p.Allow}, {"deny", p.Deny}, {"ask", p.Ask}} {
		for _, pat := range l.patterns {
			if err := validatePattern(pat); err != nil {
				errs = append(errs, fmt.Errorf("permissions.%s: %w", l.name, err))
			}
		}
	}
	return errors.Join(errs...)
}

// Matches reports whether pattern covers toolID. A pattern that Validate
// rejects matches nothing, so a typo never widens a list.
func Matches(pattern, toolID string) bool {
	return validatePattern(pattern) == nil && tools.MatchPattern(pattern, toolID)
}

func matchesAny(patterns []string, toolID string) bool {
	for _, p := range patterns {
		if Matches(p, toolID) {
			return true
		}
	}
	return false
}

func validatePattern(p string) error {
	if p == "*" {
		return nil
	}
	ns, action, hasAction := strings.Cut(p, ":")
	if !validName(ns) {
		return fmt.Errorf("invalid pattern %q: want \"*\", \"ns\", \"ns:*\" or \"ns:action\"", p)
	}
	if hasAction && action != "*" && !validName(action) {
		return fmt.Errorf("invalid pattern %q: want \"*\", \"ns\", \"ns:*\" or \"ns:action\"", p)
	}
	return nil
}

// validName accepts the characters MCP servers use in namespaces and tool
// names; anything else (spaces, a second ':', a partial wildcard like
// "file*") is almost certainly a mistake in a hand-edited file.
func validName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-', r == '.':
		default:
			return false
		}
	}
	return true
}
