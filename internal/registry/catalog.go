package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/pml-go/pml/internal/routing"
	"github.com/pml-go/pml/internal/store"
)

// Catalog paging (docs/protocol.md "Registry").
const (
	DefaultLimit = 50
	MaxLimit     = 200
	// maxScan bounds the capabilities of the viewer's org one listing
	// reads; maxOthers those of other orgs, each of at most maxOthersCode
	// characters of code (docs/security.md "Tenants and names").
	maxScan       = 10_000
	maxOthers     = 200
	maxOthersCode = 16 << 10
)

// ListOptions filter and page the catalog. Zero values list page 1 of
// DefaultLimit entries of every type.
type ListOptions struct {
	Type Type
	// Name keeps the entries a tool id names: "ns:action" for code, the
	// server name for servers.
	Name  string
	Page  int // 1-based
	Limit int
}

// Item is one catalog row.
type Item struct {
	FQDN        string       `json:"fqdn"`
	Type        Type         `json:"type"`
	Routing     routing.Side `json:"routing"`
	Description string       `json:"description"`
	// Uses counts the times a capability ran, its learned runs and calls
	// (store.Capability.TimesRun, its current version's); absent for tools
	// and servers.
	Uses *int64 `json:"uses,omitempty"`
	// InputSchema and OutputSchema are a capability's, as the viewer sees
	// them (ViewFor): what a call is validated against and returns.
	InputSchema  json.RawMessage `json:"input_schema,omitempty"`
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
	// ToolsUsed are a capability's tools: the package decides the
	// permission of its own org's capability from them.
	ToolsUsed []string `json:"tools_used,omitempty"`
}

// Catalog is one page of the catalog.
type Catalog struct {
	Items []Item `json:"items"`
	Total int    `json:"total"`
	Page  int    `json:"page"`
	Limit int    `json:"limit"`
}

// List returns one page of what viewer sees: built-ins and servers by FQDN,
// then the current version of each visible capability by name.
func (r *Registry) List(ctx context.Context, viewer store.Scope, o ListOptions) (Catalog, error) {
	if o.Page < 1 {
		o.Page = 1
	}
	if o.Limit < 1 {
		o.Limit = DefaultLimit
	}
	o.Limit = min(o.Limit, MaxLimit)
	var all []Entry
	for _, e := range r.ordered {
		if o.keeps(e) {
			all = append(all, e)
		}
	}
	if o.Type == "" || o.Type == TypeCode {
		caps, err := r.Capabilities(ctx, viewer, o.Name)
		if err != nil {
			return Catalog{}, err
		}
		all = append(all, caps...)
	}
	c := Catalog{Items: []Item{}, Total: len(all), Page: o.Page, Limit: o.Limit}
	from := (o.Page - 1) * o.Limit
	for i := from; i < len(all) && i < from+o.Limit; i++ {
		e := all[i]
		it := Item{FQDN: e.FQDN(), Type: e.Type, Routing: e.Routing, Description: e.Description}
		if e.Capability != nil {
			uses := e.Capability.TimesRun()
			if o.Name != "" { // resolved through the lookup cache
				uses = r.usesOf(ctx, e.Capability)
			}
			it.Uses = &uses
			it.InputSchema, it.OutputSchema = e.Capability.ArgsSchema, e.Capability.OutputSchema
			it.ToolsUsed = e.Capability.ToolsUsed
		}
		c.Items = append(c.Items, it)
	}
	return c, nil
}

func (o ListOptions) keeps(e Entry) bool {
	if o.Type != "" && e.Type != o.Type {
		return false
	}
	if o.Name == "" {
		return true
	}
	if e.Type == TypeCode {
		return e.Name.Namespace+":"+e.Name.Action == o.Name
	}
	return e.Name.Namespace == o.Name
}

// Capabilities are the current versions of the capabilities viewer sees, or
// with a name, the one capability that name calls for viewer.
func (r *Registry) Capabilities(ctx context.Context, viewer store.Scope, name string) ([]Entry, error) {
	if r.store == nil {
		return nil, nil
	}
	if name != "" {
		e, ok, err := r.Resolve(ctx, viewer, name)
		if err != nil || !ok {
			return nil, err
		}
		return []Entry{e}, nil
	}
	// The viewer's org and other orgs are listed apart, each bounded, so
	// other orgs' public rows never push the viewer's own out; of other
	// orgs only a bounded number of current versions of bounded size.
	own, _, err := r.store.ListCapabilities(ctx, store.CapabilityFilter{Viewer: viewer, Owners: store.OwnOrg, Current: true, Limit: maxScan})
	if err != nil {
		return nil, fmt.Errorf("listing capabilities: %w", err)
	}
	others, _, err := r.store.ListCapabilities(ctx, store.CapabilityFilter{Viewer: viewer, Owners: store.OtherOrgs, Current: true,
		Limit: maxOthers, MaxCodeChars: maxOthersCode})
	if err != nil {
		return nil, fmt.Errorf("listing other orgs' capabilities: %w", err)
	}
	out := make([]Entry, 0, len(own)+len(others))
	for _, c := range slices.Concat(own, others) {
		if r.reserved[c.Namespace] {
			continue
		}
		e, err := CapabilityEntry(c)
		if err != nil {
			continue // a scope whose org or project cannot be an FQDN part
		}
		out = append(out, r.viewed(e, viewer))
	}
	return out, nil
}

// usesOf is the times c ran (TimesRun). A capability found by name may come
// from the lookup cache, which a call does not clear, so it is read again.
func (r *Registry) usesOf(ctx context.Context, c *store.Capability) int64 {
	if fresh, err := r.store.CapabilityByID(ctx, c.ID); err == nil {
		return fresh.TimesRun()
	}
	return c.TimesRun()
}
