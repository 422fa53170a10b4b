package gateway

import (
	"context"
	"errors"

	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/routing"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/tools"
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
	caps := s.discoverCapabilities(ctx, c)
	for _, d := range caps {
		all = append(all, tools.Info{ID: d.ID, Description: d.Description, InputSchema: d.InputSchema})
	}
	out := s.rank(c, all, req, caps)
	out.Servers = s.serverStatuses()
	return out, nil
}

func (s *Service) rank(c Caller, all []tools.Info, req wire.DiscoverRequest, caps map[string]wire.DiscoveredTool) wire.DiscoverAnswer {
	return wire.RankTools(all, req, func(id string) wire.DiscoveredTool {
		if d, ok := caps[id]; ok {
			return d
		}
		if ns, _ := tools.Split(id); c.servesLocally(ns) {
			return wire.DiscoveredTool{Kind: "tool", Routing: string(routing.Client)}
		}
		return wire.DiscoveredTool{Kind: "tool", Routing: string(s.rules.Route(id))}
	})
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
