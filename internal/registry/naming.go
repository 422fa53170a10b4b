package registry

import (
	"strings"

	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/registry/fqdn"
)

// DefaultNamespace is where a learned capability lands until it is renamed:
// code calls it as mcp.cap.<action>(args).
const DefaultNamespace = "cap"

// maxActionLen keeps generated names short enough to read and type.
const maxActionLen = 48

// DefaultAction names a new capability: the intent in snake case, cut at a
// word boundary ("Sum two numbers" -> "sum_numbers"), or "run_" and the
// first 8 hex digits of the code's SHA-256 when there is no usable intent.
// Runs with the same intent and different code are versions of one
// capability (the newest is current); the same code is always one
// capability, whatever the intent.
func DefaultAction(intent, codeHash string) string {
	words := strings.FieldsFunc(strings.ToLower(intent), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	})
	s := ""
	for _, w := range words {
		next := w
		if s != "" {
			next = s + "_" + w
		}
		if len(next) > maxActionLen {
			if s == "" {
				s = w[:maxActionLen]
			}
			break
		}
		s = next
	}
	switch {
	case s == "":
		return "run_" + codeHash[:min(8, len(codeHash))]
	case s[0] >= '0' && s[0] <= '9':
		return "run_" + s // mcp.cap.2x would not parse
	}
	return s
}

// CheckName validates a capability name given to rename: both parts must be
// valid FQDN parts (so no dot: a dotted namespace is a qualified name) and
// the namespace must not be a tool's, in any letter case ("Filesystem"
// reads as filesystem to a person or a model choosing what to call).
func (r *Registry) CheckName(namespace, action string) error {
	n := fqdn.Name{Org: "o", Project: "p", Namespace: namespace, Action: action}
	if err := n.Validate(); err != nil {
		return pmlerr.New(pmlerr.InvalidRequest, "capability name %s:%s: %v", namespace, action, err)
	}
	for _, part := range []string{namespace, action} {
		if objectNames[part] {
			// Code reaches a capability as mcp.ns.action: a name JavaScript
			// objects already have would call that instead.
			return pmlerr.New(pmlerr.InvalidRequest, "capability name %s:%s: %q is a name every JavaScript object has; pick another", namespace, action, part).
				With("name", part)
		}
	}
	if r.reservedFold[strings.ToLower(namespace)] {
		return ReservedError(namespace, "belongs to tools (built-in, configured or routed by this gateway)")
	}
	return nil
}

// objectNames are the properties of Object.prototype.
var objectNames = map[string]bool{
	"__proto__": true, "constructor": true, "toString": true, "toLocaleString": true, "valueOf": true,
	"hasOwnProperty": true, "isPrototypeOf": true, "propertyIsEnumerable": true,
	"__defineGetter__": true, "__defineSetter__": true, "__lookupGetter__": true, "__lookupSetter__": true,
}

// ReservedError refuses a capability name whose namespace is a tool's.
func ReservedError(namespace, why string) error {
	return pmlerr.New(pmlerr.NamespaceReserved,
		"namespace %q %s; a capability cannot take it (use %q or a name of your own)", namespace, why, DefaultNamespace).
		With("namespace", namespace)
}
