package gateway

import (
	"context"
	"encoding/json"
	"maps"
	"time"

	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/routing"
	"github.com/pml-go/pml/internal/sandbox"
	"github.com/pml-go/pml/internal/wire"
)

// Call runs one server-routed tool: the package uses it for server tools
// during a local run.
func (s *Service) Call(ctx context.Context, c Caller, req wire.CallRequest) (json.RawMessage, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if side, _ := s.routeTool(ctx, c, req.Tool); side == routing.Client {
		return nil, pmlerr.New(pmlerr.PermissionDenied,
			"%q is a client tool: it runs on the user's machine, not on the gateway", req.Tool).With("tool", req.Tool)
	}
	if b, ok := s.byokFor(req.Tool); ok {
		ctx, cancel := context.WithTimeout(ctx, s.rpcTimeout())
		defer cancel()
		return b.call(ctx, req.Tool, argsOrEmpty(req.Args), req.Env)
	}
	if err := s.checkServerTools(ctx, c, []string{req.Tool}); err != nil {
		return nil, err
	}
	if req.Pin != "" || len(req.Pins) > 0 {
		c.Pins = maps.Clone(req.Pins)
		if c.Pins == nil {
			c.Pins = map[string]string{}
		}
		if req.Pin != "" {
			c.Pins[req.Tool] = req.Pin
		}
	}
	if err := s.callForeignCheck(ctx, &c, req.Tool); err != nil {
		return nil, err
	}
	// A direct call is one RPC: it gets the per-call bound.
	ctx, cancel := context.WithTimeout(ctx, s.rpcTimeout())
	defer cancel()
	return s.bridge(c)(ctx, req.Tool, argsOrEmpty(req.Args))
}

func (s *Service) rpcTimeout() time.Duration {
	if s.limits.RPCTimeout > 0 {
		return s.limits.RPCTimeout
	}
	return sandbox.DefaultLimits().RPCTimeout
}

func argsOrEmpty(args json.RawMessage) json.RawMessage {
	if len(args) == 0 || string(args) == "null" {
		return json.RawMessage("{}")
	}
	return args
}
