// Package procscale sets how many threads run Go code at once (GOMAXPROCS)
// to the requests a process is serving: one while it serves one, up to the
// machine's count while it serves more.
//
// pml stdio serves one AI client, mostly one request at a time, and a
// request is a chain of hand-offs between goroutines (stdin's reader, the
// call, the VM, a local server's reader) rather than parallel work. With
// processors left idle, each hand-off wakes another thread to look for
// work it does not find, and the runtime's monitor keeps polling at its
// fastest rate: in a profile of pml stdio serving three-call executions
// back to back, about a fifth of its CPU. On one processor the hand-offs
// stay on one thread, which took a sixth off pml stdio's CPU per execution
// and 0.2 ms off its latency (docs/performance.md "pml stdio's threads").
// Concurrent requests still run in parallel.
//
// pml gateway has the same shape when it serves a package's hybrid
// executions one after another: each is one HTTP request whose handling is
// a chain of hand-offs (the connection's reader, net/http's background read,
// the handler), and with a processor idle each hand-off woke a second thread
// and kept the monitor polling. Handler counts its HTTP requests
// (docs/performance.md "The hybrid path").
package procscale

import (
	"context"
	"net/http"
	"os"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Scaler follows the requests in flight. The zero value is not usable;
// New makes one.
type Scaler struct {
	max int // the processors the runtime chose; 0 when Scaler leaves them alone

	inflight atomic.Int64
	mu       sync.Mutex // serializes changes of GOMAXPROCS
	procs    atomic.Int64
}

// New returns a Scaler that has set GOMAXPROCS to one. It leaves the
// runtime's choice alone when the user chose (the GOMAXPROCS environment
// variable) or the machine has one processor.
func New() *Scaler {
	if os.Getenv("GOMAXPROCS") != "" {
		return &Scaler{}
	}
	return newScaler(runtime.GOMAXPROCS(0))
}

// newScaler returns a Scaler between one processor and max.
func newScaler(max int) *Scaler {
	s := &Scaler{}
	if max > 1 {
		s.max = max
		s.procs.Store(int64(runtime.GOMAXPROCS(0)))
		s.adjust()
	}
	return s
}

// Begin counts a request in; the function it returns counts it out and
// must be called once.
func (s *Scaler) Begin() (end func()) {
	if s.max == 0 {
		return func() {}
	}
	s.inflight.Add(1)
	s.adjust()
	return func() {
		s.inflight.Add(-1)
		s.adjust()
	}
}

// Middleware counts every request the server receives while it is served.
func (s *Scaler) Middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		defer s.Begin()()
		return next(ctx, method, req)
	}
}

// Handler counts every HTTP request next serves while it is served, its
// answer's writing included; a long-lived one (an event stream) counts
// until it ends.
func (s *Scaler) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer s.Begin()()
		next.ServeHTTP(w, r)
	})
}

// adjust sets GOMAXPROCS to the requests in flight, at least one and at
// most max. A change stops the world briefly, so it is made only when the
// count crosses to another value; concurrent callers converge on the
// count seen last under the lock.
func (s *Scaler) adjust() {
	if s.procs.Load() == s.want() {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if want := s.want(); s.procs.Load() != want {
		runtime.GOMAXPROCS(int(want))
		s.procs.Store(want)
	}
}

func (s *Scaler) want() int64 {
	return min(max(s.inflight.Load(), 1), int64(s.max))
}
