package gateway

import (
	"context"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/pml-go/pml/internal/gateway/httpapi"
	"github.com/pml-go/pml/internal/wire"
)

// drainRetry is the Retry-After of a request refused while draining: long
// enough for a balancer to pick another replica, short enough not to stall.
const drainRetry = time.Second

// lifecycle is a replica's way out on SIGTERM (docs/operations.md "Rolling
// updates"): first it reports not ready, so balancers stop sending work,
// while it still serves; then it stops admitting.
type lifecycle struct {
	notReady atomic.Bool
	refusing atomic.Bool
	inflight atomic.Int64 // MCP and execute requests admitted and not yet answered
}

// BeginDrain makes GET /readyz answer 503: balancers take the replica out
// while it goes on serving what reaches it.
func (s *Service) BeginDrain() { s.life.notReady.Store(true) }

// StopAdmitting makes new MCP and execute requests answer 503 with
// Retry-After (error "draining"): nothing of theirs ran, so a client retries
// them elsewhere. Requests already admitted run on.
func (s *Service) StopAdmitting() {
	s.life.notReady.Store(true)
	s.life.refusing.Store(true)
}

// WaitIdle waits until no admitted MCP or execute request is left
// (executions in flight have answered) or ctx ends; it reports how many are
// left.
func (s *Service) WaitIdle(ctx context.Context) int64 {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		// A refused request counts itself while it is refused: only
		// admitted ones are waited for.
		n := s.life.inflight.Load()
		if n <= 0 {
			return 0
		}
		select {
		case <-ctx.Done():
			return n
		case <-tick.C:
		}
	}
}

// InFlight is how many admitted MCP and execute requests have not yet
// answered.
func (s *Service) InFlight() int64 { return s.life.inflight.Load() }

// serveReady is GET /readyz: 200 when the replica takes work, 503 when it
// drains or its database is away. Liveness is /healthz.
func (s *Service) serveReady(w http.ResponseWriter, r *http.Request) {
	if s.life.notReady.Load() {
		httpapi.Error(w, http.StatusServiceUnavailable, "draining", "this replica is shutting down")
		return
	}
	if err := s.Ping(r.Context()); err != nil {
		httpapi.Error(w, http.StatusServiceUnavailable, "store_unavailable", err.Error())
		return
	}
	httpapi.Write(w, http.StatusOK, map[string]string{"status": "ready"})
}

// refuseWhileDraining answers new MCP and execute requests 503 once
// admission stopped.
func (s *Service) refuseWhileDraining(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.life.inflight.Add(1)
		defer s.life.inflight.Add(-1)
		if !s.life.refusing.Load() {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Retry-After", strconv.Itoa(int(drainRetry.Seconds())))
		w.Header().Set(wire.DrainingHeader, "1")
		httpapi.Write(w, http.StatusServiceUnavailable, map[string]any{
			"error":          "draining",
			"message":        "this replica is shutting down and admits no new request; retry (another replica will take it)",
			"retry_after_ms": drainRetry.Milliseconds(),
		})
	})
}
