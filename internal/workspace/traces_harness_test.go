package workspace

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/gateway/traceapi"
	"github.com/pml-go/pml/internal/gatewayclient"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/tracing"
)

// trGateway is a real gateway on a fixed loopback address and SQLite file,
// so a test can kill it (listener, connections and store) and bring it back
// as the same gateway. A hook sees each request first.
type trGateway struct {
	t    *testing.T
	db   string
	addr string
	key  string

	mu     sync.Mutex
	svc    *gateway.Service
	closer io.Closer
	srv    *http.Server
	hook   func(w http.ResponseWriter, r *http.Request, next http.Handler) bool // true: handled
	seen   []trRequest
}

// trRequest is one request as the gateway received it.
type trRequest struct {
	Method, Path, Traceparent string
	At                        time.Time
}

var trScope = store.Scope{Org: "acme", Project: "web"}

func trStartGateway(t *testing.T) *trGateway {
	t.Helper()
	g := &trGateway{t: t, db: filepath.Join(t.TempDir(), "gateway.db")}
	g.start()
	key, err := gateway.CreateKey(context.Background(), g.service().Store(), trScope)
	if err != nil {
		t.Fatal(err)
	}
	g.key = key
	t.Cleanup(g.kill)
	return g
}

func (g *trGateway) url() string { return "http://" + g.addr }

func (g *trGateway) start() {
	g.t.Helper()
	svc, closer, err := gateway.Open(context.Background(), gateway.Options{DB: g.db})
	if err != nil {
		g.t.Fatal(err)
	}
	addr := g.addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		g.t.Fatal(err)
	}
	g.addr = ln.Addr().String()
	h := svc.Handler()
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		g.seen = append(g.seen, trRequest{Method: r.Method, Path: r.URL.Path, Traceparent: r.Header.Get("traceparent"), At: time.Now()})
		hook := g.hook
		g.mu.Unlock()
		if hook == nil || !hook(w, r, h) {
			h.ServeHTTP(w, r)
		}
	})}
	go func() { _ = srv.Serve(ln) }()
	g.mu.Lock()
	g.svc, g.closer, g.srv = svc, closer, srv
	g.mu.Unlock()
}

// kill drops the listener, every open connection and the store, as a
// crashed process would.
func (g *trGateway) kill() {
	g.mu.Lock()
	srv, closer := g.srv, g.closer
	g.srv, g.closer = nil, nil
	g.mu.Unlock()
	if srv != nil {
		_ = srv.Close()
		_ = closer.Close()
	}
}

func (g *trGateway) setHook(h func(w http.ResponseWriter, r *http.Request, next http.Handler) bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.hook = h
}

func (g *trGateway) service() *gateway.Service {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.svc
}

func (g *trGateway) requests() []trRequest {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]trRequest(nil), g.seen...)
}

// stored returns the trace ids the gateway holds for the test tenant.
func (g *trGateway) stored() (map[string]int, int) {
	g.t.Helper()
	page, err := g.service().ListTraces(context.Background(), gateway.Caller{Scope: trScope}, traceapi.Query{Limit: traceapi.MaxPageSize})
	if err != nil {
		g.t.Fatal(err)
	}
	ids := map[string]int{}
	for _, s := range page.Traces {
		ids[s.TraceID]++
	}
	return ids, page.Total
}

// trace returns one stored trace by id.
func (g *trGateway) trace(id string) tracing.Trace {
	g.t.Helper()
	row, err := g.service().Store().TraceByID(context.Background(), trScope, id)
	if err != nil {
		g.t.Fatalf("trace %s: %v", id, err)
	}
	var tr tracing.Trace
	if err := json.Unmarshal(row.Body, &tr); err != nil {
		g.t.Fatal(err)
	}
	return tr
}

// trFastSync retries quickly, so fault tests take milliseconds, not minutes.
var trFastSync = tracing.SyncOptions{MinBackoff: 20 * time.Millisecond, MaxBackoff: 100 * time.Millisecond, Interval: 50 * time.Millisecond}

// trWorkspace is a workspace that allows every tool, with files.
func trWorkspace(t *testing.T, files map[string]string) string {
	t.Helper()
	ws := t.TempDir()
	files[ConfigFile] = `{"version": "1", "permissions": {"allow": ["*"]}}`
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return ws
}

// trOpen opens a package in ws talking to g.
func trOpen(t *testing.T, ws string, g *trGateway, sync tracing.SyncOptions) *Workspace {
	t.Helper()
	p, err := New(Options{Workspace: ws, Gateway: gatewayclient.NewRemote(g.url(), g.key, filepath.Join(ws, StateDir)), TraceSync: sync})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// trWaitFor polls cond for up to 15 s.
func trWaitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}
