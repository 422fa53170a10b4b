//go:build linux

package workspace_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/httpserve"
	"github.com/pml-go/pml/internal/wire"
	"github.com/pml-go/pml/internal/workspace"
)

// pml serve's HTTP server closes headers that never end and answers 408 to
// a body that never ends, 413 to one over 1 MiB; an MCP client is served
// after each, and the server stops when its context ends.
func TestServeHTTPBounds(t *testing.T) {
	p, _ := openLocalMode(t, nil)
	srv := p.HTTPServer(workspace.ServeOptions{}, httpserve.Limits{ReadHeaderTimeout: 500 * time.Millisecond, BodyTimeout: 500 * time.Millisecond})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	addr := ln.Addr().String()

	dial := func(head string) net.Conn {
		t.Helper()
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		if _, err := io.WriteString(c, head); err != nil {
			t.Fatal(err)
		}
		_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
		return c
	}
	post := func(contentLength int) string {
		return "POST /mcp HTTP/1.1\r\nHost: pml.invalid\r\nContent-Type: application/json\r\n" +
			"Accept: application/json, text/event-stream\r\nContent-Length: " + strconv.Itoa(contentLength) + "\r\n\r\n"
	}
	checkAnswer := func(c net.Conn, status int, code string) {
		t.Helper()
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("want HTTP %d: %v", status, err)
		}
		defer resp.Body.Close()
		var e struct{ Error string }
		_ = json.NewDecoder(resp.Body).Decode(&e)
		if resp.StatusCode != status || e.Error != code || !resp.Close {
			t.Fatalf("HTTP %d %q close=%v, want %d %s and the connection closed", resp.StatusCode, e.Error, resp.Close, status, code)
		}
	}
	serves := func() {
		t.Helper()
		client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, nil)
		s, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp"}, nil)
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		defer s.Close()
		if _, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "discover", Arguments: map[string]any{"query": "read a file"}}); err != nil {
			t.Fatalf("discover: %v", err)
		}
	}

	c := dial("POST /mcp HTTP/1.1\r\nHost: pml.invalid\r\n")
	if _, err := c.Read(make([]byte, 1)); err == nil || isTimeout(err) {
		t.Fatalf("unfinished headers: connection still open (%v)", err)
	}
	serves()
	checkAnswer(dial(post(100)+`{"jsonrpc":`), http.StatusRequestTimeout, "request_timeout")
	serves()
	checkAnswer(dial(post(wire.MaxRequestBytes+1)), http.StatusRequestEntityTooLarge, "request_too_large")
	serves()

	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("Serve after its context ended: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Serve still running 30 s after its context ended")
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
