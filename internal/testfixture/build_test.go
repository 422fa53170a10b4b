package testfixture_test

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/testfixture"
)

func TestBuildServerIsCached(t *testing.T) {
	first := testfixture.BuildServer(t)
	second := testfixture.BuildServer(t)
	if first != second {
		t.Fatalf("two builds gave two binaries: %s, %s", first, second)
	}
}

func echo(t *testing.T, transport mcp.Transport) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil)
	cs, err := client.Connect(ctx, transport, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
	if err != nil {
		t.Fatalf("call echo: %v", err)
	}
	return res.Content[0].(*mcp.TextContent).Text
}

func TestServerOverStdio(t *testing.T) {
	bin := testfixture.BuildServer(t)
	if got := echo(t, &mcp.CommandTransport{Command: exec.Command(bin)}); got != "hi" {
		t.Fatalf("echo over stdio = %q, want hi", got)
	}
}

func TestServerOverHTTP(t *testing.T) {
	srv := testfixture.StartHTTPServer(t, testfixture.BuildServer(t))
	if got := echo(t, &mcp.StreamableClientTransport{Endpoint: srv.URL}); got != "hi" {
		t.Fatalf("echo over HTTP = %q, want hi", got)
	}
}
