package httpserve

import (
	"context"
	"io"
	"net"
	"net/http"
	"testing"
)

// Wrap's middleware sees every request, outside the handler New was given.
func TestWrapIsOutermost(t *testing.T) {
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, r.Header.Get("X-Seen"))
	})
	s := New(inner, Limits{MaxUnauthConns: -1}, nil)
	s.Wrap(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			r.Header.Set("X-Seen", "wrapped")
			next.ServeHTTP(w, r)
		})
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	resp, err := http.Get("http://" + ln.Addr().String() + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if string(body) != "wrapped" {
		t.Fatalf("answer %q, want the middleware's mark", body)
	}
}
