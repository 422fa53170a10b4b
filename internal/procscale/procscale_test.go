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

func TestMiddlewareCountsARequestWhileItIsServed(t *testing.T) {
	keepProcs(t)
	s := newScaler(2)
	release := make(chan struct{})
	during := make(chan int, 2)
	h := s.Middleware(func(context.Context, string, mcp.Request) (mcp.Result, error) {
		during <- runtime.GOMAXPROCS(0)
		<-release
		return nil, nil
	})
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() { _, _ = h(context.Background(), "tools/call", nil) })
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
}

func TestHandlerCountsARequestWhileItIsServed(t *testing.T) {
	keepProcs(t)
	s := newScaler(2)
	release := make(chan struct{})
	during := make(chan int, 2)
	h := s.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		during <- runtime.GOMAXPROCS(0)
		<-release
	}))
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/api/v1/execute", nil))
		})
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
