package workspace

import (
	"context"
	"errors"
	"maps"

	"github.com/pml-go/pml/internal/approval"
	"github.com/pml-go/pml/internal/registry"
	regclient "github.com/pml-go/pml/internal/registry/client"
	"github.com/pml-go/pml/internal/tools"
	"github.com/pml-go/pml/internal/wire"
)

// pinQualified checks each capability of another org that ids call by its
// qualified name (registry.IsQualified) against the lockfile, whatever its
// routing: what the person approved is what runs (docs/security.md
// "Tenants and names"). The first sight is recorded; a changed entry under
// the name (new code, a rename onto it) is an integrity item to approve
// first; the others are pinned, their five-part FQDN by tool id, for the
// gateway to run that version only (wire.ExecuteOptions.Pins). An id that
// names a version itself (`action.hash4`) is pinned by its code already; one
// the registry does not know, or cannot be asked about, is left to the call
// (UNKNOWN_TOOL, or the offline path).
func (p *Workspace) pinQualified(ctx context.Context, ids []string) (map[string]string, []approval.Item, error) {
	var pins map[string]string
	var items []approval.Item
	for _, id := range ids {
		e, item, ok, err := p.pinned(ctx, id)
		switch {
		case err != nil:
			return nil, nil, err
		case item != nil:
			items = append(items, *item)
		case ok:
			if pins == nil {
				pins = map[string]string{}
			}
			pins[id] = e.FQDN
		}
	}
	return pins, items, nil
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
