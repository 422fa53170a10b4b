package registry

import (
	"errors"
	"fmt"

	"github.com/pml-go/pml/internal/registry/fqdn"
	"github.com/pml-go/pml/internal/routing"
	"github.com/pml-go/pml/internal/store"
)

// Type is how an entry is delivered (docs/protocol.md "Registry"; "deno", an
// older name, is read as code).
type Type string

// The registry types.
const (
	TypeCode  Type = "code"  // TypeScript source: a capability or a built-in tool
	TypeStdio Type = "stdio" // install metadata of a server the package runs
	TypeHTTP  Type = "http"  // proxy metadata of a server the gateway runs
)

// ParseType reads a ?type= filter; "" means every type.
func ParseType(s string) (Type, error) {
	switch t := Type(s); t {
	case "", TypeCode, TypeStdio, TypeHTTP:
		return t, nil
	case "deno": // an older name for code
		return TypeCode, nil
	}
	return "", fmt.Errorf("unknown registry type %q (want code, stdio or http)", s)
}

// Entry is one registry entry as GET /mcp/{fqdn} serves it.
type Entry struct {
	Name        fqdn.Name // five-part: its hash is the current one
	Type        Type
	Routing     routing.Side
	Description string
	Integrity   string // "sha256-<hex>" of Body for code, of the metadata for servers
	Body        []byte // the code, or the metadata JSON
	// Shared says a shared HTTP cache may keep the entry: everything but a
	// tenant's capability that is not public.
	Shared bool
	// Capability is the stored capability behind a capability entry.
	Capability *store.Capability
}

// FQDN returns the entry's five-part name.
func (e Entry) FQDN() string { return e.Name.String() }

// ContentType is the Content-Type the entry is served with.
func (e Entry) ContentType() string {
	if e.Type == TypeCode {
		return "application/typescript"
	}
	return "application/json"
}

// ETag is the entry's HTTP entity tag: its quoted integrity.
func (e Entry) ETag() string { return `"` + e.Integrity + `"` }

// ErrNotFound is returned (wrapped) when no entry the viewer may see has the
// requested name: unknown and another tenant's private entry look the same.
var ErrNotFound = errors.New("not in registry")

// HashMismatchError says the name exists but its current hash is another one
// (404 hash_mismatch): an outdated or mistyped version.
type HashMismatchError struct {
	Requested fqdn.Name
	Current   Entry
}

func (e *HashMismatchError) Error() string {
	return fmt.Sprintf("Hash '%s' does not match current hash '%s' for %s",
		e.Requested.Hash, e.Current.Name.Hash, e.Requested.Base())
}

// CapabilityEntry names a stored capability by its scope, name and code.
func CapabilityEntry(c store.Capability) (Entry, error) {
	n, integrity := fqdn.ForCode(c.Scope.Org, c.Scope.Project, c.Namespace, c.Action, c.Code)
	if err := n.Validate(); err != nil {
		return Entry{}, fmt.Errorf("capability %s: %w", c.ID, err)
	}
	return Entry{
		Name:        n,
		Type:        TypeCode,
		Routing:     routing.Side(c.Routing),
		Description: c.Description,
		Integrity:   integrity,
		Body:        []byte(c.Code),
		Shared:      c.Visibility == store.VisibilityPublic,
		Capability:  &c,
	}, nil
}

// Visible reports whether viewer may see c: its own project's, its org's
// with visibility org or public, anyone's public ones (the store's rule).
func Visible(viewer store.Scope, c store.Capability) bool {
	switch {
	case c.Scope == viewer, c.Visibility == store.VisibilityPublic:
		return true
	case c.Scope.Org == viewer.Org:
		return c.Visibility == store.VisibilityOrg
	}
	return false
}
