package gatewayclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/pmlerr"
	regclient "github.com/pml-go/pml/internal/registry/client"
	"github.com/pml-go/pml/internal/routing"
	"github.com/pml-go/pml/internal/tracing"
	"github.com/pml-go/pml/internal/wire"
)

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
func (g *InProcess) ReportTools(ctx context.Context, clientID string, tools []wire.ClientTool) error {
	return g.Service.ReportClientTools(ctx, g.caller(), clientID, tools)
}

// Admin implements Gateway.
func (g *InProcess) Admin(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	req, err := wire.DecodeAdmin(args)
	if err != nil {
		return nil, err
	}
	out, err := g.Service.Admin(ctx, g.caller(), req)
	if err != nil {
		return nil, err
	}
	return json.Marshal(out)
}

// LearnCapability implements Gateway.
func (g *InProcess) LearnCapability(ctx context.Context, req wire.LearnRequest) (*wire.CapabilityRef, error) {
	return g.Service.LearnLocal(ctx, g.caller(), req)
}

// Registry implements Gateway: the same HTTP registry, served in this
// process (no cache: nothing to save a round trip on).
func (g *InProcess) Registry() *regclient.Client {
	return regclient.New("http://pml.in-process", &http.Client{Transport: g.Service.LocalTransport(gateway.LocalScope)}, "")
}

// PostTraces implements TracePoster for local mode: the in-process gateway
// stores the batch directly. A refused batch is permanent, as a 400 is.
func (g *InProcess) PostTraces(ctx context.Context, batch []tracing.Trace, b TraceBacklog) error {
	_, err := g.Service.IngestTraces(ctx, g.caller(), batch)
	return g.ingested(err, b)
}

// PostOwnTraces implements OwnTracePoster: the package of this process
// sanitized the batch, with its .env values, and its traces never left
// this process's memory, so the gateway does not sanitize them again.
func (g *InProcess) PostOwnTraces(ctx context.Context, batch []tracing.Trace, b TraceBacklog) error {
	_, err := g.Service.IngestOwnTraces(ctx, g.caller(), batch)
	return g.ingested(err, b)
}

// ingested is the outcome of storing a batch: on success the package's
// backlog is reported.
func (g *InProcess) ingested(err error, b TraceBacklog) error {
	switch {
	case pmlerr.CodeOf(err, "") == pmlerr.InvalidRequest:
		return &tracing.PermanentError{Status: http.StatusBadRequest, Body: err.Error()}
	case err != nil:
		return fmt.Errorf("store traces in process: %w", err)
	}
	g.Service.ReportTraceQueue(b.Depth, b.Dropped)
	return nil
}

// Close implements Gateway.
func (g *InProcess) Close() error {
	if g.Closer == nil {
		return nil
	}
	return g.Closer()
}

// TraceReader implements TraceReader: the in-process gateway's trace read
// API for the local scope.
func (g *InProcess) TraceReader() http.Handler { return g.Service.TraceReader(gateway.LocalScope) }
