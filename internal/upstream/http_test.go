package upstream_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/testfixture"
	"github.com/pml-go/pml/internal/upstream"
)

func TestHTTPServer(t *testing.T) {
	srv := testfixture.StartHTTPServer(t, testfixture.BuildServer(t))
	p, starts := newPool(t, upstream.Options{})
	s := p.Add(upstream.ServerConfig{Name: "remote", Type: "http", URL: srv.URL,
		Headers: map[string]string{"Authorization": "Bearer sekrit"}})

	list, err := s.Tools(ctxTimeout(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if len(list) == 0 || list[0].Namespace() != "remote" {
		t.Fatalf("tools over HTTP = %v", list)
	}
	if got := string(call(t, s, "add", `{"a":1,"b":2}`)); got != `{"sum":3}` {
		t.Fatalf("add over HTTP = %s", got)
	}
	if got := string(call(t, s, "header", `{"name":"Authorization"}`)); got != `"Bearer sekrit"` {
		t.Fatalf("server saw Authorization %s, want the configured header", got)
	}
	_, err = s.Call(ctxTimeout(t, 300*time.Millisecond), "hang", nil)
	wantCode(t, err, pmlerr.RPCTimeout)
	if !s.Running() || len(starts.get()) != 1 {
		t.Fatal("http session not reused")
	}
}

func TestHTTPServerDown(t *testing.T) {
	srv := testfixture.StartHTTPServer(t, testfixture.BuildServer(t))
	p, _ := newPool(t, upstream.Options{})
	s := p.Add(upstream.ServerConfig{Name: "remote", URL: srv.URL})
	call(t, s, "echo", `{"text":"up"}`)

	if err := srv.Cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = srv.Cmd.Wait()
	_, err := s.Call(ctxTimeout(t, 10*time.Second), "echo", json.RawMessage(`{"text":"down"}`))
	wantCode(t, err, pmlerr.ToolError)
	_, err = s.Call(context.Background(), "echo", json.RawMessage(`{"text":"still down"}`))
	wantCode(t, err, pmlerr.ToolError)
}

// A server speaking the older HTTP+SSE transport (type "sse", as Claude
// Code's .mcp.json lists it) serves calls, sends the configured headers and
// keeps its session (the event stream outlives the start's deadline).
func TestSSEServer(t *testing.T) {
	srv := testfixture.StartHTTPServer(t, testfixture.BuildServer(t), "-sse", "-auth", "sekrit")
	p, starts := newPool(t, upstream.Options{StartTimeout: 2 * time.Second})
	noAuth := p.Add(upstream.ServerConfig{Name: "noauth", Type: upstream.TypeSSE, URL: srv.URL})
	_, err := noAuth.Call(ctxTimeout(t, 10*time.Second), "add", json.RawMessage(`{"a":1,"b":2}`))
	wantCode(t, err, pmlerr.ToolError) // the server refuses a stream without the header
	s := p.Add(upstream.ServerConfig{Name: "legacy", Type: upstream.TypeSSE, URL: srv.URL,
		Headers: map[string]string{"Authorization": "Bearer sekrit"}})

	list, err := s.Tools(ctxTimeout(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if len(list) == 0 || list[0].Namespace() != "legacy" {
		t.Fatalf("tools over SSE = %v", list)
	}
	if got := string(call(t, s, "add", `{"a":1,"b":2}`)); got != `{"sum":3}` {
		t.Fatalf("add over SSE = %s", got)
	}
	time.Sleep(2500 * time.Millisecond) // past StartTimeout: the stream must not die with the start's context
	if got := string(call(t, s, "add", `{"a":2,"b":2}`)); got != `{"sum":4}` {
		t.Fatalf("add over SSE after the start deadline = %s", got)
	}
	if !s.Running() || len(starts.get()) != 1 {
		t.Fatalf("sse session not reused: %d starts", len(starts.get()))
	}
}

// An sse server that is not there fails the call with TOOL_ERROR, and the
// pool still serves its other servers.
func TestSSEServerDown(t *testing.T) {
	srv := testfixture.StartHTTPServer(t, testfixture.BuildServer(t), "-sse")
	p, _ := newPool(t, upstream.Options{})
	bad := p.Add(upstream.ServerConfig{Name: "gone", Type: upstream.TypeSSE, URL: "http://127.0.0.1:9/sse"})
	_, err := bad.Call(ctxTimeout(t, 10*time.Second), "echo", json.RawMessage(`{"text":"x"}`))
	wantCode(t, err, pmlerr.ToolError)
	good := p.Add(upstream.ServerConfig{Name: "legacy", Type: upstream.TypeSSE, URL: srv.URL})
	if got := string(call(t, good, "add", `{"a":1,"b":1}`)); got != `{"sum":2}` {
		t.Fatalf("add = %s", got)
	}
}
