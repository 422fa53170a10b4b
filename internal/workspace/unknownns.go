package workspace

import (
	"context"
	"slices"
	"strings"

	"github.com/pml-go/pml/internal/registry"
	"github.com/pml-go/pml/internal/tools"
	"github.com/pml-go/pml/internal/wire"
)

// unknownTool refuses, before any approval is asked, a static call that
// nobody serves: its namespace is not this machine's (built-ins, .pml.json
// servers, dependencies), the gateway knows no tool or capability of that
// exact name, and the catalog has no server to install under it. Asking to
// approve a call that can only fail would ask for nothing. The gateway is
// asked once per plan, one exact name per tool it may serve; when it cannot
// be reached nothing new is refused (the offline path says what it runs).
// A capability named with its owner is left to its own approval.
func (p *Workspace) unknownTool(ctx context.Context, pl *plan) error {
	if pl.toolsKnown {
		return nil
	}
	pl.toolsKnown = true
	for _, t := range pl.an.Tools {
		ns, _ := tools.Split(t)
		if registry.IsQualified(t) || p.servedLocally(pl, ns) {
			continue
		}
		ans, err := p.gw.Discover(ctx, wire.DiscoverRequest{Name: t, Limit: 1})
		if err != nil {
			p.log.Debug("plan check: the gateway did not answer discover", "tool", t, "err", err)
			return nil
		}
		if _, hosted := ans.Servers[ns]; ans.Total > 0 || hosted {
			// A hosted server that is not running lists no tools; its
			// call gets the server's own error (state and last error).
			continue
		}
		if _, found, err := p.catalogEntry(ctx, ns); err != nil || found {
			continue // a server the plan may install is asked for by planItems
		}
		return tools.UnknownToolError(t, p.nearTools(ctx, pl, t))
	}
	return nil
}

// servedLocally reports whether this machine serves namespace ns.
func (p *Workspace) servedLocally(pl *plan, ns string) bool {
	if _, ok := pl.cfg.MCPServers[ns]; ok {
		return true
	}
	if _, ok := p.deps.Installed(ns); ok {
		return true
	}
	_, ok := pl.local.Provider(ns)
	return ok
}

// nearTools are the tools an unknown tool id may have meant: this
// machine's tools and the gateway's best matches for its words, with their
// schemas so the error can declare them.
func (p *Workspace) nearTools(ctx context.Context, pl *plan, id string) []tools.Info {
	var out []tools.Info
	if list, err := pl.local.Tools(ctx); err == nil {
		out = append(out, list...)
	}
	query := strings.NewReplacer(":", " ", "_", " ").Replace(id)
	if ans, err := p.gw.Discover(ctx, wire.DiscoverRequest{Query: query, Limit: 50, Schemas: true}); err == nil {
		for _, d := range ans.Tools {
			out = append(out, tools.Info{ID: d.ID, Description: d.Description, InputSchema: d.InputSchema, OutputSchema: d.OutputSchema})
		}
	}
	slices.SortFunc(out, func(a, b tools.Info) int { return strings.Compare(a.ID, b.ID) })
	return slices.CompactFunc(out, func(a, b tools.Info) bool { return a.ID == b.ID })
}
