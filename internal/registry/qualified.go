package registry

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/pml-go/pml/internal/registry/fqdn"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/tools"
)

// IsQualified reports whether a tool id names its owner: its namespace is
// "org.project.ns" (code writes mcp["org.project.ns"].action(args)). A tool
// namespace never holds a dot, so such an id is always a capability's.
func IsQualified(toolID string) bool {
	ns, _ := tools.Split(toolID)
	return strings.Contains(ns, ".")
}

// Qualified parses a qualified tool id, "org.project.ns:action" (the
// current version) or "org.project.ns:action.hash4" (that version only),
// into the FQDN it stands for.
func Qualified(toolID string) (fqdn.Name, bool) {
	ns, action := tools.Split(toolID)
	if !strings.Contains(ns, ".") || action == "" {
		return fqdn.Name{}, false
	}
	n, err := fqdn.Parse(ns + "." + action)
	if err != nil || n.Org+"."+n.Project+"."+n.Namespace != ns {
		return fqdn.Name{}, false
	}
	return n, true
}

// QualifiedID is the tool id that calls capability c wherever the caller
// stands: "org.project.ns:action".
func QualifiedID(c store.Capability) string {
	return c.Scope.Org + "." + c.Scope.Project + "." + c.Namespace + ":" + c.Action
}

// Owner labels whose code a capability is: "org/project".
func Owner(s store.Scope) string { return s.Org + "/" + s.Project }

// resolveQualified finds the capability a qualified tool id names, if
// viewer may see it; a pinned hash that is no longer current names nothing.
func (r *Registry) resolveQualified(ctx context.Context, viewer store.Scope, toolID string) (Entry, bool, error) {
	n, ok := Qualified(toolID)
	if !ok {
		return Entry{}, false, nil
	}
	e, err := r.Get(ctx, viewer, n)
	var mismatch *HashMismatchError
	switch {
	case errors.Is(err, ErrNotFound), errors.As(err, &mismatch):
		return Entry{}, false, nil
	case err != nil:
		return Entry{}, false, fmt.Errorf("resolving %s: %w", toolID, err)
	case e.Capability == nil:
		return Entry{}, false, nil // a built-in or a server: not called this way
	}
	return e, true, nil
}
