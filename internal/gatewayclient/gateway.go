// Package gatewayclient is the PML package's side of the gateway: the
// Gateway it needs, Remote (MCP and the HTTP API of a `pml gateway`, with the
// key, the package's headers and the gateway's refusals as wire errors) and
// InProcess (local mode, the same service in this process).
package gatewayclient

import (
	"context"
	"encoding/json"

	regclient "github.com/pml-go/pml/internal/registry/client"
	"github.com/pml-go/pml/internal/routing"
	"github.com/pml-go/pml/internal/tracing"
	"github.com/pml-go/pml/internal/wire"
)

// Gateway is what the package needs from the gateway. Remote talks to
// `pml gateway` over HTTP, MCP and its API; InProcess is local mode, the
// same service in this process. Errors reaching the gateway are
// NETWORK_ERROR.
type Gateway interface {
	Execute(ctx context.Context, req wire.ExecuteRequest) (wire.Answer, error)
	Call(ctx context.Context, req wire.CallRequest) (json.RawMessage, error)
	Discover(ctx context.Context, req wire.DiscoverRequest) (wire.DiscoverAnswer, error)
	Routing(ctx context.Context) (routing.Rules, error)
	ReportTools(ctx context.Context, clientID string, tools []wire.ClientTool) error
	// Admin runs the gateway's admin tool (capability rename, describe,
	// visibility) with the AI client's arguments.
	Admin(ctx context.Context, args json.RawMessage) (json.RawMessage, error)
	// LearnCapability reports code that ran successfully here, which the
	// gateway saves as a capability.
	LearnCapability(ctx context.Context, req wire.LearnRequest) (*wire.CapabilityRef, error)
	// Registry returns a client of the gateway's registry (GET /mcp/{fqdn}).
	Registry() *regclient.Client
	// SetClientNamespaces names the namespaces the package serves on this
	// machine; every later request tells the gateway.
	SetClientNamespaces(namespaces []string)
	Close() error
}

// TracePoster is a gateway that takes traces; Remote and InProcess are.
type TracePoster interface {
	PostTraces(ctx context.Context, batch []tracing.Trace, b TraceBacklog) error
}

// OwnTracePoster is a gateway in the package's process (InProcess): it also
// takes the traces the package sanitized and held in memory since
// (tracing.SyncOptions.PostOwn), which it stores without sanitizing them
// again.
type OwnTracePoster interface {
	PostOwnTraces(ctx context.Context, batch []tracing.Trace, b TraceBacklog) error
}

// TraceBacklog travels with a batch so the gateway's /metrics show the
// package's sync state: its queue depth once the batch is delivered, and the
// traces it dropped since its last delivered batch.
type TraceBacklog struct {
	Depth   int
	Dropped int64
}
