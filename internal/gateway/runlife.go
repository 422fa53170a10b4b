package gateway

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// requestIDHeader carries, from ownRuns to the MCP tool handlers, the id
// of the HTTP request a tool call came in. ownRuns sets it on every request
// whatever the client sent, so no client can name another's request.
const requestIDHeader = "X-Pml-Gateway-Request"

// requestContexts maps the id in requestIDHeader to the context of its
// HTTP request while the request is served, and holds the context that
// CancelRuns ends.
type requestContexts struct {
	m sync.Map // string -> context.Context

	once    sync.Once
	drained context.Context
	drain   context.CancelCauseFunc
}

// drainContext is the context CancelRuns cancels.
func (rc *requestContexts) drainContext() context.Context {
	rc.once.Do(func() { rc.drained, rc.drain = context.WithCancelCause(context.Background()) })
	return rc.drained
}

// errDrained is the cause of the runs CancelRuns cancels.
var errDrained = errors.New("the gateway is shutting down and its grace for running executions ran out")

// CancelRuns cancels every run of a request in flight (MCP, whatever its
// client's protocol version, or POST /api/v1/execute), without ending the
// requests: each run stops and is answered CANCELLED with its trace stored
// (docs/operations.md "Rolling updates"). A draining gateway calls it at
// the end of its grace, waits for the answers, and only then ends the
// requests still open.
func (s *Service) CancelRuns() {
	s.requests.drainContext()
	s.requests.drain(errDrained)
}

// ownRuns ties every MCP tool call of a request to that request, whatever
// the client's protocol version (docs/how-it-works.md "Cancellation"): the
// SDK's stateless handler ends a handler with its request only for
// clients of MCP 2026-07-28 on, so a run of an older client whose
// connection closed would otherwise run on, holding its admission place,
// with nobody to answer. It also ties them to CancelRuns.
func (s *Service) ownRuns(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b [16]byte
		_, _ = rand.Read(b[:]) // never fails (crypto/rand panics instead)
		id := hex.EncodeToString(b[:])
		r.Header.Set(requestIDHeader, id)
		s.requests.m.Store(id, r.Context())
		defer s.requests.m.Delete(id)
		next.ServeHTTP(w, r)
	})
}

// errRequestEnded is the cause of a call whose request was over before its
// handler looked it up: nobody can be answered for it any more.
var errRequestEnded = errors.New("the request ended before its call started")

// requestScoped returns ctx, also cancelled when the HTTP request req came
// in ends (its client went away, or the server cancelled it) or CancelRuns
// is called, with its cause; release frees what it holds once the handler
// returns.
func (s *Service) requestScoped(ctx context.Context, req *mcp.CallToolRequest) (scoped context.Context, release func()) {
	if req == nil || req.Extra == nil || req.Extra.Header == nil {
		return ctx, func() {}
	}
	id := req.Extra.Header.Get(requestIDHeader)
	if id == "" {
		return ctx, func() {}
	}
	v, ok := s.requests.m.Load(id)
	if !ok {
		scoped, cancel := context.WithCancelCause(ctx)
		cancel(errRequestEnded)
		return scoped, func() {}
	}
	return s.bindRun(ctx, v.(context.Context))
}

// bindRun returns ctx, also cancelled with its cause when rctx ends (nil:
// never) or CancelRuns is called; release frees what it holds once the run
// is over. Every run of an execute, over MCP or POST /api/v1/execute, is
// bound so.
func (s *Service) bindRun(ctx, rctx context.Context) (scoped context.Context, release func()) {
	scoped, cancel := context.WithCancelCause(ctx)
	drained := s.requests.drainContext()
	stopDrain := context.AfterFunc(drained, func() { cancel(context.Cause(drained)) })
	stopRequest := func() bool { return false }
	if rctx != nil {
		stopRequest = context.AfterFunc(rctx, func() { cancel(context.Cause(rctx)) })
	}
	return scoped, func() {
		stopRequest()
		stopDrain()
		cancel(nil)
	}
}
