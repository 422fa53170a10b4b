//go:build linux

package e2e

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/testfixture"
	"github.com/pml-go/pml/internal/wire"
	"github.com/pml-go/pml/internal/workspace"
)

// freePort returns a loopback port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// connectHTTP opens an MCP session to a pml serve endpoint, with the token
// unless it is "".
func connectHTTP(endpoint, token string) (*mcp.ClientSession, error) {
	h := http.Header{}
	if token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	return mcp.NewClient(&mcp.Implementation{Name: "ai-client", Version: "0"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: gatewaytest.HTTPClient(h)}, nil)
}

// startServe runs `pml serve` in ws with args and waits until it listens.
func startServe(t *testing.T, ws string, env []string, port int, args ...string) (*exec.Cmd, <-chan error) {
	t.Helper()
	cmd := exec.Command(pmlBinary(t), append([]string{"serve", "--port", strconv.Itoa(port)}, args...)...)
	cmd.Env = pmlEnv(append(env, "PML_WORKSPACE="+ws)...)
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		if t.Failed() {
			t.Logf("pml serve stderr:\n%s", stderr)
		}
	})
	waitFor(t, callTimeout, "pml serve to listen", func() bool {
		c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return cmd, exited
}

// pml serve --port: the same package over Streamable HTTP at /mcp on
// 127.0.0.1; SIGINT stops it and its local servers.
func TestServeStreamableHTTP(t *testing.T) {
	g := startGateway(t, gateway.Options{})
	ws := fixtureWorkspace(t)
	testfixture.WriteFile(t, ws, "data.txt", "served")
	port := freePort(t)
	cmd, exited := startServe(t, ws, gatewayEnv(g), port)
	endpoint := "http://127.0.0.1:" + strconv.Itoa(port) + "/mcp"
	if _, err := connectHTTP(endpoint, ""); err == nil {
		t.Fatal("pml serve accepted a client without the workspace token")
	}
	token := readFile(t, filepath.Join(ws, workspace.StateDir, workspace.ServeTokenFile))
	s, err := connectHTTP(endpoint, strings.TrimSpace(token))
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Text string  `json:"text"`
		Pid  int     `json:"pid"`
		N    float64 `json:"n"`
	}
	wantLocal(t, callExecute(t, s, wire.ExecuteRequest{Code: `return {
		text: await mcp.filesystem.read_file({path: "data.txt"}),
		pid: await mcp.fx.pid({}),
		n: await mcp.math.add({a: 20, b: 22})}`}), &res)
	if res.Text != "served" || res.N != 42 || res.Pid == 0 {
		t.Fatalf("result %+v", res)
	}
	_ = s.Close()

	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("pml serve exited with %v", err)
		}
	case <-time.After(prompt + 5*time.Second): // the HTTP drain may take its 5 s
		_ = cmd.Process.Signal(syscall.SIGKILL)
		t.Fatal("pml serve did not stop on SIGINT")
	}
	if left := waitGone([]int{res.Pid}, prompt); len(left) > 0 {
		t.Fatalf("local server %v outlived pml serve", left)
	}
}

// pml init --http writes an .mcp.json entry an HTTP client can use as it
// is: the URL of pml serve and the workspace token; the file is private and
// ignored by git. pml serve --no-auth takes clients without a token.
func TestInitHTTPThenAIClientConnects(t *testing.T) {
	ws := t.TempDir()
	port := freePort(t)
	if out, errOut, code := runPML(t, ws, nil, "", "init", "-y", "--http", "--port", strconv.Itoa(port)); code != 0 {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}
	mcpPath := filepath.Join(ws, ".mcp.json")
	var cfg struct {
		MCPServers map[string]struct {
			Type    string            `json:"type"`
			URL     string            `json:"url"`
			Headers map[string]string `json:"headers"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(readFile(t, mcpPath)), &cfg); err != nil {
		t.Fatal(err)
	}
	entry := cfg.MCPServers["pml"]
	token, ok := strings.CutPrefix(entry.Headers["Authorization"], "Bearer ")
	if entry.Type != "http" || entry.URL != "http://127.0.0.1:"+strconv.Itoa(port)+"/mcp" || !ok ||
		token != strings.TrimSpace(readFile(t, filepath.Join(ws, workspace.StateDir, workspace.ServeTokenFile))) {
		t.Fatalf(".mcp.json entry %+v", entry)
	}
	if fi, err := os.Stat(mcpPath); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf(".mcp.json mode %v %v", fi.Mode(), err)
	}
	if !slices.Contains(strings.Split(readFile(t, filepath.Join(ws, ".gitignore")), "\n"), ".mcp.json") {
		t.Fatal(".mcp.json is not in .gitignore")
	}

	testfixture.WriteFile(t, ws, "todo.txt", "ship it")
	startServe(t, ws, nil, port)
	if _, err := connectHTTP(entry.URL, ""); err == nil {
		t.Fatal("connected without the token")
	}
	s, err := connectHTTP(entry.URL, token)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var text string
	wantLocal(t, callExecute(t, s, wire.ExecuteRequest{Code: `return await mcp.filesystem.read_file({path: "todo.txt"})`}), &text)
	if text != "ship it" {
		t.Fatalf("got %q", text)
	}

	open := freePort(t)
	startServe(t, ws, nil, open, "--no-auth")
	s2, err := connectHTTP("http://127.0.0.1:"+strconv.Itoa(open)+"/mcp", "")
	if err != nil {
		t.Fatalf("--no-auth: %v", err)
	}
	defer s2.Close()
	wantLocal(t, callExecute(t, s2, wire.ExecuteRequest{Code: `return await mcp.filesystem.read_file({path: "todo.txt"})`}), &text)
}
