package gateway

import (
	"context"
	"encoding/json"

	"github.com/pml-go/pml/internal/analysis"
	"github.com/pml-go/pml/internal/routing"
	"github.com/pml-go/pml/internal/tools"
	"github.com/pml-go/pml/internal/wire"
)

// bridge is the sandbox's mcp bridge on the gateway: every call is a server
// tool (the plan proved it).
func (s *Service) bridge(c Caller) tools.CallFunc {
	return func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		return s.tools.Call(ctx, tool, args)
	}
}

// routeTool says where one tool of a plan runs and its FQDN when known.
func (s *Service) routeTool(ctx context.Context, c Caller, id string) (routing.Side, string) {
	return s.rules.Route(id), ""
}

// isCapability reports whether id names a capability the caller can call.
func (s *Service) isCapability(ctx context.Context, c Caller, id string) bool { return false }

// learn saves a successful run as a capability.
func (s *Service) learn(ctx context.Context, c Caller, req wire.ExecuteRequest, an *analysis.Analysis, plan Plan) *wire.CapabilityRef {
	return nil
}
