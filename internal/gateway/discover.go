package gateway

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/pml-go/pml/internal/learning"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/routing"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/tools"
	"github.com/pml-go/pml/internal/tools/local"
	"github.com/pml-go/pml/internal/wire"
)

// Discover ranks the tools this tenant can call by relevance to the query.
func (s *Service) Discover(ctx context.Context, c Caller, req wire.DiscoverRequest) (wire.DiscoverAnswer, error) {
	all, err := s.tools.Tools(ctx)
	if err != nil {
		return wire.DiscoverAnswer{}, pmlerr.Wrap(pmlerr.Internal, err)
	}
	if s.store != nil {
		reported, err := s.store.ClientTools(ctx, c.Scope)
		if err != nil {
			s.log.Warn("discover: client tools unavailable", "err", err)
		}
		for _, t := range reported {
			all = append(all, tools.Info{ID: t.ID, Description: t.Description, InputSchema: t.InputSchema})
		}
	}
	// A tool that declares no output schema is typed by what its calls
	// returned: the tenant's own, else the global layer's
	// (docs/how-it-works.md "The global layer"), but for a namespace the
	// caller's package serves with a server of its own, which may be
	// another than the one others call by that name.
	inferred, builtinClient := s.learner.OutputTypes(ctx, c.Scope), local.Namespaces()
	for i := range all {
		if len(all[i].OutputSchema) == 0 {
			ns, _ := tools.Split(all[i].ID)
			global := !c.servesLocally(ns) || slices.Contains(builtinClient, ns)
			if schema, ok := inferred(all[i].ID, global); ok {
				all[i].OutputSchema, all[i].OutputInferred = schema, true
			}
		}
	}
	caps := s.discoverCapabilities(ctx, c)
	if _, listed := caps[req.Name]; req.Name != "" && !listed {
		s.oldName(ctx, c, req.Name, caps)
	}
	for _, d := range caps {
		all = append(all, tools.Info{ID: d.ID, Description: d.Description, InputSchema: d.InputSchema, OutputSchema: d.OutputSchema})
	}
	learned := s.learner.LearnedText(ctx, c.Scope)
	for i := range all {
		all[i].Learned = learned(all[i].ID)
	}
	graph := toWire(s.learner.Successors(ctx, c.Scope, graphSuccessors))
	query := discoverQuery(req)
	var boost map[string]float64
	if req.Name == "" {
		boost = s.learner.Boost(ctx, c.Scope, query)
	}
	out := s.rank(c, all, req, caps, graph, boost)
	out.Servers = s.serverStatuses()
	if req.Graph {
		out.Graph, out.Context, out.Boost = graph, serverContext(all), boost
	}
	if query != "" && req.Name == "" {
		shown := make([]string, len(out.Tools))
		for i, d := range out.Tools {
			shown[i] = d.ID
		}
		s.learner.NoteDiscover(c.Scope, c.Who, query, shown)
	}
	if req.Name != "" {
		out.Related = toNeighbors(s.learner.Related(ctx, c.Scope, req.Name, relatedTools))
	}
	return out, nil
}

// How much of the tool graph discover reads: each tool's most frequent
// successors for ranking, and the tools most used with a tool looked up by
// name.
const (
	graphSuccessors = 5
	relatedTools    = 5
)

func toWire(g map[string][]learning.Neighbor) map[string][]wire.Neighbor {
	if len(g) == 0 {
		return nil
	}
	out := make(map[string][]wire.Neighbor, len(g))
	for tool, next := range g {
		out[tool] = toNeighbors(next)
	}
	return out
}

func toNeighbors(list []learning.Neighbor) []wire.Neighbor {
	if len(list) == 0 {
		return nil
	}
	out := make([]wire.Neighbor, len(list))
	for i, n := range list {
		out[i] = wire.Neighbor(n)
	}
	return out
}

func (s *Service) rank(c Caller, all []tools.Info, req wire.DiscoverRequest, caps map[string]wire.DiscoveredTool, graph map[string][]wire.Neighbor, boost map[string]float64) wire.DiscoverAnswer {
	return wire.RankTools(all, req, func(id string) wire.DiscoveredTool {
		if d, ok := caps[id]; ok {
			return d
		}
		if ns, _ := tools.Split(id); c.servesLocally(ns) {
			return wire.DiscoveredTool{Kind: "tool", Routing: string(routing.Client)}
		}
		return wire.DiscoveredTool{Kind: "tool", Routing: string(s.rules.Route(id))}
	}, graph, boost)
}

// discoverQuery is what a discover asks, in words: its query, else its
// queries together.
func discoverQuery(req wire.DiscoverRequest) string {
	if strings.TrimSpace(req.Query) != "" || len(req.Queries) == 0 {
		return req.Query
	}
	return strings.Join(req.Queries, ". ")
}

// serverContext is what each server of all says of itself, by namespace.
func serverContext(all []tools.Info) map[string]string {
	var out map[string]string
	for _, t := range all {
		if t.Server == "" {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[t.Namespace()] = t.Server
	}
	return out
}

// ReportClientTools records the tools a package has on its machine, so that
// discover and analysis know them as client tools.
func (s *Service) ReportClientTools(ctx context.Context, c Caller, clientID string, list []store.ClientTool) error {
	if s.store == nil {
		return nil
	}
	if clientID == "" {
		return pmlerr.New(pmlerr.InvalidRequest, "client_id is required")
	}
	err := s.store.PutClientTools(ctx, c.Scope, clientID, list)
	if errors.Is(err, store.ErrInvalid) {
		return pmlerr.New(pmlerr.InvalidRequest, "client tools report: %v", err)
	}
	return err
}

// oldName adds to caps, under name, the capability a name the caller's
// project renamed now calls (store.RenameCapability), so a lookup by the
// old name finds what code calling it runs.
func (s *Service) oldName(ctx context.Context, c Caller, name string, caps map[string]wire.DiscoveredTool) {
	e, ok, err := s.capability(ctx, c, name)
	if err != nil || !ok || e.Capability == nil {
		return
	}
	current := e.Capability.Namespace + ":" + e.Capability.Action
	d, listed := caps[current]
	if !listed {
		return
	}
	d.ID = name
	d.Description = "Old name of " + current + ". " + d.Description
	caps[name] = d
}
