package gatewayclient_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/gatewayclient"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/wire"
)

// pathLog records the paths of the POSTs a proxy passed on.
type pathLog struct {
	mu    sync.Mutex
	paths []string
}

func (l *pathLog) add(p string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.paths = append(l.paths, p)
}

// take returns the paths logged since the last take.
func (l *pathLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.paths
	l.paths = nil
	return out
}

// proxy is g behind a reverse proxy that logs every POST's path and, when
// older, answers POST /api/v1/execute 404, as a gateway that predates it.
func proxy(t *testing.T, g *gatewaytest.Gateway, older bool) (string, *pathLog) {
	t.Helper()
	u, err := url.Parse(g.URL)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	log := &pathLog{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			log.add(r.URL.Path)
		}
		if older && r.URL.Path == wire.ExecutePath {
			http.NotFound(w, r)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, log
}

// An execute without progress goes as one plain POST /api/v1/execute; one
// with progress goes over MCP.
func TestRemoteExecutesPlainUnlessProgress(t *testing.T) {
	g, _ := startGateway(t)
	base, log := proxy(t, g, false)
	r := gatewayclient.NewRemote(base, g.Key, "")
	t.Cleanup(func() { _ = r.Close() })
	req := wire.ExecuteRequest{Code: `return await mcp.math.add({a: 1, b: 2})`}
	for range 3 {
		if a, err := r.Execute(context.Background(), req); err != nil || a.Status != wire.StatusSuccess || string(a.Result) != "3" || a.TraceID == "" {
			t.Fatalf("plain execute: %+v %v", a, err)
		}
	}
	if got := log.take(); !slices.Equal(got, []string{wire.ExecutePath, wire.ExecutePath, wire.ExecutePath}) {
		t.Fatalf("three executes sent %q", got)
	}
	p := newProgressLog()
	if a, err := r.Execute(wire.WithProgress(context.Background(), p.report), req); err != nil || a.Status != wire.StatusSuccess {
		t.Fatalf("execute with progress: %+v %v", a, err)
	}
	if got := log.take(); slices.Contains(got, wire.ExecutePath) || !slices.Contains(got, "/mcp") {
		t.Fatalf("an execute with progress sent %q", got)
	}
}

// A gateway older than POST /api/v1/execute answers it 404: the execute
// goes over MCP instead, with the same answer, and every later one too,
// without asking again.
func TestRemoteFallsBackToMCPOnOlderGateway(t *testing.T) {
	g, _ := startGateway(t)
	base, log := proxy(t, g, true)
	r := gatewayclient.NewRemote(base, g.Key, "")
	t.Cleanup(func() { _ = r.Close() })
	req := wire.ExecuteRequest{Code: `return await mcp.fx.echo({text: "old"})`}
	for i := range 3 {
		a, err := r.Execute(context.Background(), req)
		if err != nil || a.Status != wire.StatusSuccess || string(a.Result) != `"old"` || a.TraceID == "" {
			t.Fatalf("execute %d through an older gateway: %+v %v", i, a, err)
		}
		got := log.take()
		if tried := slices.Contains(got, wire.ExecutePath); tried != (i == 0) || !slices.Contains(got, "/mcp") {
			t.Fatalf("execute %d sent %q", i, got)
		}
	}
}

// The gateway's refusals of a plain execute are the errors they are over
// MCP (a refused key UNAUTHORIZED, 429 OVERLOADED with its wait, anything
// else outside the protocol NETWORK_ERROR), none of them taken for an
// older gateway, and the next request is answered.
func TestRemotePlainExecuteRefusals(t *testing.T) {
	var status atomic.Int32
	var mcpPosts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != wire.ExecutePath {
			mcpPosts.Add(1)
			http.Error(w, "not here", http.StatusInternalServerError)
			return
		}
		switch st := int(status.Load()); st {
		case http.StatusOK:
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"status":"success","result":7,"trace_id":"t"}`))
		case http.StatusTooManyRequests:
			w.Header().Set("Retry-After", "3")
			http.Error(w, `{"error":"overloaded","message":"busy"}`, st)
		case -1:
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"status":`))
		default:
			http.Error(w, `{"error":"bad_request","message":"no"}`, st)
		}
	}))
	t.Cleanup(srv.Close)
	r := gatewayclient.NewRemote(srv.URL, "pml_key", "")
	t.Cleanup(func() { _ = r.Close() })
	ctx := context.Background()
	req := wire.ExecuteRequest{Code: "return 7"}
	for _, c := range []struct {
		status int
		code   pmlerr.Code
		says   string
	}{
		{http.StatusUnauthorized, pmlerr.Unauthorized, "HTTP 401"},
		{http.StatusForbidden, pmlerr.Unauthorized, "HTTP 403"},
		{http.StatusTooManyRequests, pmlerr.Overloaded, "retry after 3s"},
		{http.StatusBadRequest, pmlerr.NetworkError, "HTTP 400"},
		{http.StatusRequestEntityTooLarge, pmlerr.NetworkError, "HTTP 413"},
		{http.StatusInternalServerError, pmlerr.NetworkError, "HTTP 500"},
		{-1, pmlerr.NetworkError, "undecodable"},
	} {
		status.Store(int32(c.status))
		_, err := r.Execute(ctx, req)
		if pmlerr.CodeOf(err, "") != c.code || !strings.Contains(err.Error(), c.says) {
			t.Fatalf("HTTP %d: %v, want %s saying %q", c.status, err, c.code, c.says)
		}
		status.Store(http.StatusOK)
		if a, err := r.Execute(ctx, req); err != nil || a.Status != wire.StatusSuccess || string(a.Result) != "7" {
			t.Fatalf("after HTTP %d: %+v %v", c.status, a, err)
		}
	}
	if n := mcpPosts.Load(); n != 0 {
		t.Fatalf("%d requests went over MCP", n)
	}
}
