package procscale

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// keepProcs restores GOMAXPROCS after a test that changes it.
func keepProcs(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(before) })
}

func TestProcessorsFollowTheRequestsInFlight(t *testing.T) {
	keepProcs(t)
	s := newScaler(3)
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Fatalf("idle: GOMAXPROCS %d, want 1", got)
	}
	end1 := s.Begin()
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Fatalf("one request: GOMAXPROCS %d, want 1", got)
	}
	end2 := s.Begin()
	end3 := s.Begin()
	end4 := s.Begin()
	if got := runtime.GOMAXPROCS(0); got != 3 {
		t.Fatalf("four requests: GOMAXPROCS %d, want the maximum 3", got)
	}
	end4()
	end3()
	if got := runtime.GOMAXPROCS(0); got != 2 {
		t.Fatalf("two requests: GOMAXPROCS %d, want 2", got)
	}
	end2()
	end1()
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Fatalf("all ended: GOMAXPROCS %d, want 1", got)
	}
}

func TestConcurrentRequestsSettleOnOne(t *testing.T) {
	keepProcs(t)
	s := newScaler(4)
	var wg sync.WaitGroup
	for range 64 {
		wg.Go(func() {
			for range 50 {
				s.Begin()()
			}
		})
	}
	wg.Wait()
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Fatalf("after concurrent requests: GOMAXPROCS %d, want 1", got)
	}
}

// The MCP middleware and the HTTP handler each count a request while it is
// served: two served at once get two processors, then one again.
func TestWrappersCountARequestWhileItIsServed(t *testing.T) {
	for name, wrap := range map[string]func(s *Scaler, serve func()) func(){
		"Middleware": func(s *Scaler, serve func()) func() {
			h := s.Middleware(func(context.Context, string, mcp.Request) (mcp.Result, error) {
				serve()
				return nil, nil
			})
			return func() { _, _ = h(context.Background(), "tools/call", nil) }
		},
		"Handler": func(s *Scaler, serve func()) func() {
			h := s.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { serve() }))
			return func() {
				h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/api/v1/execute", nil))
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			keepProcs(t)
			release := make(chan struct{})
			during := make(chan int, 2)
			request := wrap(newScaler(2), func() {
				during <- runtime.GOMAXPROCS(0)
				<-release
			})
			var wg sync.WaitGroup
			for range 2 {
				wg.Go(request)
			}
			<-during
			<-during
			if got := runtime.GOMAXPROCS(0); got != 2 {
				t.Fatalf("two requests served: GOMAXPROCS %d, want 2", got)
			}
			close(release)
			wg.Wait()
			if got := runtime.GOMAXPROCS(0); got != 1 {
				t.Fatalf("served: GOMAXPROCS %d, want 1", got)
			}
		})
	}
}

func TestTheUsersChoiceStands(t *testing.T) {
	keepProcs(t)
	runtime.GOMAXPROCS(2)
	t.Setenv("GOMAXPROCS", "2")
	s := New()
	s.Begin()()
	if got := runtime.GOMAXPROCS(0); got != 2 {
		t.Fatalf("GOMAXPROCS set by the user: %d, want 2 untouched", got)
	}
	one := newScaler(1)
	one.Begin()()
	if got := runtime.GOMAXPROCS(0); got != 2 {
		t.Fatalf("a one-processor Scaler changed GOMAXPROCS to %d", got)
	}
}
