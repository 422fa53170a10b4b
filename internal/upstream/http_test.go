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
