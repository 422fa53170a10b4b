package e2e

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/wire"
)

// liveGateway is a real gateway (gatewaytest.Start) served on a loopback
// listener of our own, through a handler that records every request, so the
// tests see what the package sends and can kill the gateway mid-run.
type liveGateway struct {
	*gatewaytest.Gateway
	URL string // what the package is given as PML_CLOUD_URL
	rec *requestLog
	srv *http.Server
}

// seenRequest is one HTTP request the package made to the gateway.
type seenRequest struct {
	Path     string
	Client   string // X-PML-Client
	HasKey   bool   // Authorization: Bearer …
	Method   string // JSON-RPC method of a POST /mcp
	Tool     string // tools/call: the gateway tool (execute, call, discover)
	CallTool string // call: the server tool it runs
}

type requestLog struct {
	mu   sync.Mutex
	reqs []seenRequest
}

func (l *requestLog) all() []seenRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]seenRequest(nil), l.reqs...)
}

// toolCalls returns the tools/call requests to gateway tool name.
func (l *requestLog) toolCalls(name string) []seenRequest {
	var out []seenRequest
	for _, r := range l.all() {
		if r.Method == "tools/call" && r.Tool == name {
			out = append(out, r)
		}
	}
	return out
}

// executes returns the execute requests: POST /api/v1/execute, which the
// package sends, and tools/call execute over MCP (the package's with
// progress, other clients').
func (l *requestLog) executes() []seenRequest {
	out := l.toolCalls("execute")
	for _, r := range l.all() {
		if r.Path == wire.ExecutePath {
			out = append(out, r)
		}
	}
	return out
}

// paths returns the requests to path.
func (l *requestLog) paths(path string) []seenRequest {
	var out []seenRequest
	for _, r := range l.all() {
		if r.Path == path {
			out = append(out, r)
		}
	}
	return out
}

func (l *requestLog) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reqs = nil
}

// wrap records each request as the gateway answers it (before the client
// can read the answer), so a recorded tools/call is a finished one.
func (l *requestLog) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen := seenRequest{Path: r.URL.Path, Client: r.Header.Get(wire.ClientHeader), HasKey: r.Header.Get("Authorization") != ""}
		if r.Method == http.MethodPost && r.URL.Path == "/mcp" {
			body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
			r.Body = io.NopCloser(bytes.NewReader(body))
			seen.Method, seen.Tool, seen.CallTool = gatewaytest.ToolCallOf(body)
		}
		record := sync.OnceFunc(func() {
			l.mu.Lock()
			l.reqs = append(l.reqs, seen)
			l.mu.Unlock()
		})
		next.ServeHTTP(answerWriter{ResponseWriter: w, answered: record}, r)
		record()
	})
}

// answerWriter calls answered before the first write that is not a
// notification: the gateway's answer, in its event stream or alone.
type answerWriter struct {
	http.ResponseWriter
	answered func()
}

func (w answerWriter) Write(p []byte) (int, error) {
	if !bytes.Contains(p, []byte(`"method":"notifications/`)) {
		w.answered()
	}
	return w.ResponseWriter.Write(p)
}

// Unwrap lets the event stream flush through.
func (w answerWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// startGateway runs a gateway with opts behind a recording handler.
func startGateway(t testing.TB, opts gateway.Options) *liveGateway {
	t.Helper()
	g := &liveGateway{Gateway: gatewaytest.Start(t, opts), rec: &requestLog{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g.URL = "http://" + ln.Addr().String()
	g.srv = &http.Server{Handler: g.rec.wrap(g.Service.Handler()), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = g.srv.Serve(ln) }()
	t.Cleanup(g.kill)
	return g
}

// kill stops the gateway the package talks to: the listener and every open
// connection, as a crashed process would.
func (g *liveGateway) kill() { _ = g.srv.Close() }
