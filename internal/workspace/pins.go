package workspace

import (
	"context"
	"errors"
	"maps"

	"github.com/pml-go/pml/internal/approval"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/registry"
	regclient "github.com/pml-go/pml/internal/registry/client"
	"github.com/pml-go/pml/internal/runner"
	"github.com/pml-go/pml/internal/tools"
	"github.com/pml-go/pml/internal/wire"
)

// pinQualified checks each capability of another org that ids call by its
// qualified name (registry.IsQualified) against the lockfile, whatever its
// routing, and then every qualified capability their code calls, as deep as
// the nesting goes: what the person approved is what runs, one level down
// too (docs/security.md "Tenants and names"). The first sight is recorded;
// a changed entry under the name (new code, a rename onto it, a forgotten
// skill relearned) is an integrity item to approve first; the others are
// pinned, their five-part FQDN by tool id, for the gateway to run that
// version only (wire.ExecuteOptions.Pins, wire.CallRequest.Pins). An id
// that names a version itself (`action.hash4`) is pinned by its code
// already; one the registry does not know, or cannot be asked about, is
// left to the call (UNKNOWN_TOOL, or the offline path).
func (p *Workspace) pinQualified(ctx context.Context, ids []string) (map[string]string, []approval.Item, error) {
	w := pinWalk{p: p, seen: map[string]bool{}}
	if err := w.visit(ctx, ids, 0); err != nil {
		return nil, nil, err
	}
	return w.pins, w.items, nil
}

// pinWalk is one pinQualified: the ids seen so far (a capability reached
// twice, or calling itself, is checked once) and what the walk found.
type pinWalk struct {
	p     *Workspace
	seen  map[string]bool
	pins  map[string]string
	items []approval.Item
}

func (w *pinWalk) visit(ctx context.Context, ids []string, depth int) error {
	for _, id := range ids {
		if w.seen[id] {
			continue
		}
		w.seen[id] = true
		e, item, ok, err := w.p.pinned(ctx, id)
		switch {
		case err != nil:
			return err
		case item != nil:
			w.items = append(w.items, *item)
			continue // its code is not approved: nothing of it is looked into
		case !ok:
			continue
		}
		if w.pins == nil {
			w.pins = map[string]string{}
		}
		w.pins[id] = e.FQDN
		if e.Type != registry.TypeCode || depth >= runner.MaxDepth {
			continue // deeper than any run may nest: the call itself fails
		}
		an, err := w.p.analyzer.Analyze(string(e.Body))
		if err != nil {
			return pmlerr.New(pmlerr.ToolError, "capability %s: its code does not analyse: %v", id, err)
		}
		if err := w.visit(ctx, qualifiedTools(an.Tools), depth+1); err != nil {
			return err
		}
	}
	return nil
}

// pinned fetches the current entry of the qualified id and checks it
// against the lockfile: ok with the entry when it passes, the integrity
// item when it changed.
func (p *Workspace) pinned(ctx context.Context, id string) (e regclient.Entry, item *approval.Item, ok bool, err error) {
	n, qualified := registry.Qualified(id)
	if !qualified || n.Hash != "" {
		return e, nil, false, nil
	}
	e, err = p.gw.Registry().Fetch(ctx, n.Base())
	switch {
	case errors.Is(err, registry.ErrNotFound), err != nil && isNetworkError(err):
		return e, nil, false, nil
	case err != nil:
		return e, nil, false, err
	}
	if item, err = p.trusted(e); err != nil || item != nil {
		return e, item, false, err
	}
	return e, nil, true, nil
}

// withPins is opts with pins added.
func withPins(opts *wire.ExecuteOptions, pins map[string]string) *wire.ExecuteOptions {
	if len(pins) == 0 {
		return opts
	}
	out := wire.ExecuteOptions{}
	if opts != nil {
		out = *opts
	}
	out.Pins = maps.Clone(pins)
	return &out
}

// capabilityTools answers the tools of a capability of the project's own
// org by its bare name (askItems), from the registry; false for a name the
// registry does not know as one, or cannot be asked about. Only a name
// that would be asked for reaches the registry.
func (p *Workspace) capabilityTools(ctx context.Context, pl *plan) func(string) ([]string, bool) {
	return func(id string) ([]string, bool) { return p.toolsOfCapability(ctx, pl, id) }
}

func (p *Workspace) toolsOfCapability(ctx context.Context, pl *plan, id string) ([]string, bool) {
	ns, _ := tools.Split(id)
	if _, served := pl.local.Provider(ns); served || registry.IsQualified(id) {
		return nil, false
	}
	item, found, err := p.gw.Registry().Resolve(ctx, id)
	if err != nil || !found || item.Type != registry.TypeCode {
		return nil, false
	}
	return item.ToolsUsed, true
}
