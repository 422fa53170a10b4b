package pkgclient

import (
	"context"
	"encoding/json"
	"sync/atomic"

	"github.com/pml-go/pml/internal/gateway"
	regclient "github.com/pml-go/pml/internal/registry/client"
	"github.com/pml-go/pml/internal/routing"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/wire"
)

// Gateway is what the package needs from the gateway. Remote talks MCP over
// HTTP to `pml gateway`; InProcess is local mode, the same service in this
// process. Errors reaching the gateway are NETWORK_ERROR.
type Gateway interface {
	Execute(ctx context.Context, req wire.ExecuteRequest) (wire.Answer, error)
	Call(ctx context.Context, req wire.CallRequest) (json.RawMessage, error)
	Discover(ctx context.Context, req wire.DiscoverRequest) (wire.DiscoverAnswer, error)
	Routing(ctx context.Context) (routing.Rules, error)
	ReportTools(ctx context.Context, clientID string, tools []store.ClientTool) error
	// Admin runs the gateway's admin tool (capability rename, describe,
	// visibility) with the AI client's arguments.
	Admin(ctx context.Context, args json.RawMessage) (json.RawMessage, error)
	// LearnCapability reports code that ran successfully here, which the
	// gateway saves as a capability.
	LearnCapability(ctx context.Context, code, intent string) (*wire.CapabilityRef, error)
	// Registry returns a client of the gateway's registry (GET /mcp/{fqdn}).
	Registry() *regclient.Client
	// SetClientNamespaces names the namespaces the package serves on this
	// machine; every later request tells the gateway.
	SetClientNamespaces(namespaces []string)
	Close() error
}

// InProcess is local mode: no URL, no key, no port.
type InProcess struct {
	Service *gateway.Service
	Closer  func() error
	local   atomic.Pointer[[]string]
}

func (g *InProcess) caller() gateway.Caller {
	c := gateway.Caller{Scope: gateway.LocalScope, IsPackage: true}
	if ns := g.local.Load(); ns != nil {
		c.ClientNamespaces = *ns
	}
	return c
}

// SetClientNamespaces implements Gateway.
func (g *InProcess) SetClientNamespaces(namespaces []string) { g.local.Store(&namespaces) }

// Execute implements Gateway.
func (g *InProcess) Execute(ctx context.Context, req wire.ExecuteRequest) (wire.Answer, error) {
	return g.Service.Execute(ctx, g.caller(), req), nil
}

// Call implements Gateway.
func (g *InProcess) Call(ctx context.Context, req wire.CallRequest) (json.RawMessage, error) {
	return g.Service.Call(ctx, g.caller(), req)
}

// Discover implements Gateway.
func (g *InProcess) Discover(ctx context.Context, req wire.DiscoverRequest) (wire.DiscoverAnswer, error) {
	return g.Service.Discover(ctx, g.caller(), req)
}

// Routing implements Gateway.
func (g *InProcess) Routing(context.Context) (routing.Rules, error) { return g.Service.Rules(), nil }

// ReportTools implements Gateway.
func (g *InProcess) ReportTools(ctx context.Context, clientID string, tools []store.ClientTool) error {
	return g.Service.ReportClientTools(ctx, g.caller(), clientID, tools)
}

// Close implements Gateway.
func (g *InProcess) Close() error {
	if g.Closer == nil {
		return nil
	}
	return g.Closer()
}
