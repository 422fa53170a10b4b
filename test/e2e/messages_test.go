package e2e

import (
	"context"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/pmlerr"
)

// A release build's version (stamped as .goreleaser.yaml does) is what the
// MCP handshake's serverInfo says, as `pml version` does, and an execute
// whose code is not a string is refused in the tool's terms (issue 41,
// item 7).
func TestHandshakeVersionAndArgumentTypes(t *testing.T) {
	const version = "9.8.7-e2e"
	bin := filepath.Join(t.TempDir(), "pml")
	build := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", bin,
		"-ldflags", "-X github.com/pml-go/pml/internal/buildinfo.version="+version, "./cmd/pml")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if out, err := exec.Command(bin, "version").Output(); err != nil || !strings.Contains(string(out), version) {
		t.Fatalf("pml version: %v %s", err, out)
	}

	ws := t.TempDir()
	cmd := exec.Command(bin, "stdio")
	cmd.Env = pmlEnv("PML_WORKSPACE=" + ws)
	cmd.Dir = ws
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "messages-e2e", Version: "0"}, nil)
	s, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, nil)
	if err != nil {
		t.Fatalf("connecting to pml stdio: %v", err)
	}
	defer s.Close()
	if got := s.InitializeResult().ServerInfo.Version; got != version {
		t.Errorf("serverInfo.version = %q, want the build's %q", got, version)
	}

	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "execute", Arguments: map[string]any{"code": 42}})
	if err != nil {
		t.Fatal(err)
	}
	a := gatewaytest.DecodeAnswer(t, res)
	if a.ErrorCode != pmlerr.InvalidRequest || !strings.Contains(a.Error, "code must be a string") || strings.Contains(a.Error, "Go struct") {
		t.Errorf("execute {code: 42}: %s %q, want INVALID_REQUEST saying code must be a string", a.ErrorCode, a.Error)
	}
}
