// Package fqdn names registry entries (docs/protocol.md "Registry"): a
// capability, a built-in tool or an MCP server is
// "org.project.namespace.action.hash4", where hash4 is the first four hex
// digits of the SHA-256 of its content, so a new version of the same thing is a
// new name. The four-part form without the hash names "whatever is current" and
// is the key integrity checks and permission patterns work on.
package fqdn

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// ErrInvalid is wrapped by every Parse and Validate error, so callers can
// tell a malformed name (a client error) from other failures.
var ErrInvalid = errors.New("invalid fqdn")

// MaxPartLen bounds each dotted part; MCP tool names are at most 128 characters.
const MaxPartLen = 128

// Name is a parsed FQDN. Hash is four lowercase hex digits, or "" for a
// four-part name.
//
// Parts are case-sensitive and made of ASCII letters, digits, '_' and '-'
// (MCP tool names such as "read_file" or "API-get-user" keep their spelling);
// '.' is the separator and so never appears inside a part. Parse accepts
// exactly what String produces: there is no normalisation, so a name has one
// spelling.
type Name struct {
	Org, Project, Namespace, Action, Hash string
}

// Parse parses a five-part ("casys.pml.fs.read_json.a7f3") or four-part
// ("casys.pml.fs.read_json") FQDN.
func Parse(s string) (Name, error) {
	parts := strings.Split(s, ".")
	var n Name
	switch len(parts) {
	case 5:
		n.Hash = parts[4]
		fallthrough
	case 4:
		n.Org, n.Project, n.Namespace, n.Action = parts[0], parts[1], parts[2], parts[3]
	default:
		return Name{}, fmt.Errorf("%w %q: want 4 or 5 dot-separated parts, got %d", ErrInvalid, s, len(parts))
	}
	if err := n.validate(len(parts) == 5); err != nil {
		return Name{}, fmt.Errorf("%w %q: %v", ErrInvalid, s, err)
	}
	return n, nil
}

// ParseAnyHash is Parse for a lookup that answers a wrong version with the
// current one: a five-part name whose four-part base is valid and whose
// fifth part is any four characters parses, the hash as given (it then
// matches no version, so the lookup reports a mismatch rather than a
// malformed name). Anything else is Parse's result.
func ParseAnyHash(s string) (Name, error) {
	n, err := Parse(s)
	if err == nil || strings.Count(s, ".") != 4 {
		return n, err
	}
	i := strings.LastIndexByte(s, '.')
	if utf8.RuneCountInString(s[i+1:]) != 4 {
		return Name{}, err
	}
	base, berr := Parse(s[:i])
	if berr != nil {
		return Name{}, err
	}
	base.Hash = s[i+1:]
	return base, nil
}

// Validate reports whether n would survive Parse(n.String()) unchanged. The
// For* constructors do not validate, because their inputs (server and tool
// names) come from configuration; call Validate before publishing a name.
func (n Name) Validate() error {
	if err := n.validate(n.Hash != ""); err != nil {
		return fmt.Errorf("%w %q: %v", ErrInvalid, n.String(), err)
	}
	return nil
}

func (n Name) validate(hashed bool) error {
	for _, p := range [...]struct{ label, value string }{
		{"org", n.Org}, {"project", n.Project}, {"namespace", n.Namespace}, {"action", n.Action},
	} {
		if err := validatePart(p.value); err != nil {
			return fmt.Errorf("%s: %v", p.label, err)
		}
	}
	if hashed && !isHash4(n.Hash) {
		return fmt.Errorf("hash %q: want 4 lowercase hex digits", n.Hash)
	}
	return nil
}

func validatePart(p string) error {
	if p == "" {
		return errors.New("empty")
	}
	if len(p) > MaxPartLen {
		return fmt.Errorf("longer than %d characters", MaxPartLen)
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return fmt.Errorf("%q: character %q not allowed (letters, digits, '_' and '-' only)", p, c)
		}
	}
	return nil
}

func isHash4(h string) bool {
	if len(h) != 4 {
		return false
	}
	for i := 0; i < 4; i++ {
		c := h[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// String returns the five-part form when Hash is set, else the four-part form.
func (n Name) String() string {
	if n.Hash == "" {
		return n.Base()
	}
	return n.Base() + "." + n.Hash
}

// Base returns the four-part form, without the hash.
func (n Name) Base() string {
	return n.Org + "." + n.Project + "." + n.Namespace + "." + n.Action
}

// WithHash returns a copy of n with the given hash ("" makes it four-part).
func (n Name) WithHash(h string) Name {
	n.Hash = h
	return n
}
