//go:build linux

package scale_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/testfixture"
	"github.com/pml-go/pml/internal/wire"
)

// fixtureConfig writes, in dir, a gateway config hosting the test fixture
// MCP server as "fx", and returns its path.
func fixtureConfig(t testing.TB, dir string) string {
	t.Helper()
	config := filepath.Join(dir, "gateway.json")
	cfg, _ := json.Marshal(map[string]any{"servers": map[string]any{
		"fx": map[string]any{"type": "stdio", "command": testfixture.BuildServer(t), "hosted": true},
	}})
	if err := os.WriteFile(config, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	return config
}

// Kill a hosted stdio MCP server while the gateway waits for one of its
// calls: that execution is TOOL_ERROR (promptly, not after the RPC timeout),
// and the next one succeeds on a restarted server.
func TestFaultUpstreamKilledMidCall(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	config := fixtureConfig(t, dir)
	db := filepath.Join(dir, "gateway.db")
	r := startReplica(t, "gateway", db, "--config", config)
	c := newMCPClient(r.url, createKey(t, db))
	defer c.close()
	ctx := t.Context()

	pid := fixturePID(t, c)
	type result struct {
		a   wire.Answer
		err error
	}
	// The count call marks the moment the execution reached the server; the
	// sleep call follows at once.
	mark := filepath.Join(dir, "mark")
	code := fmt.Sprintf(`await mcp.fx.count({ file: %q }); return await mcp.fx.sleep({ ms: 20000 })`, mark)
	done := make(chan result, 1)
	go func() {
		a, err := c.execute(ctx, code)
		done <- result{a, err}
	}()
	waitForFile(t, mark)
	time.Sleep(100 * time.Millisecond) // the sleep call is in flight
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill the fixture server %d: %v", pid, err)
	}
	killed := time.Now()
	var res result
	select {
	case res = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the execution did not end 10 s after its server was killed")
	}
	if res.err != nil || res.a.Status != wire.StatusError || res.a.ErrorCode != pmlerr.ToolError || res.a.Error == "" {
		t.Fatalf("want TOOL_ERROR, got %v %s", res.err, res.a)
	}
	t.Logf("TOOL_ERROR %v after the kill: %s", time.Since(killed).Round(time.Millisecond), res.a.Error)

	a, err := c.execute(ctx, `return await mcp.fx.echo({ text: "back" })`)
	if err != nil || a.Status != wire.StatusSuccess || string(a.Result) != `"back"` {
		t.Fatalf("the next call: %v %s %s", err, a, a.Result)
	}
	if again := fixturePID(t, c); again == pid {
		t.Fatalf("the fixture server still has pid %d: it was not restarted", pid)
	}
	restarts, err := r.metric(ctx, `pml_upstream_server_starts_total{kind="restart",server="fx"}`)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("upstream restarts counted by the gateway: %v", restarts)
}

// fixturePID asks the hosted fixture server for its process id.
func fixturePID(t *testing.T, c *mcpClient) int {
	t.Helper()
	a, err := c.execute(t.Context(), `return await mcp.fx.pid({})`)
	if err != nil || a.Status != wire.StatusSuccess {
		t.Fatalf("fx.pid: %v %s", err, a)
	}
	pid, err := strconv.Atoi(string(a.Result))
	if err != nil {
		t.Fatalf("fx.pid answered %s", a.Result)
	}
	return pid
}

func waitForFile(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never appeared", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A hosted tool that never answers fails its call with RPC_TIMEOUT after
// the gateway's --rpc-timeout, naming the tool; the server goes on serving.
func TestFaultUpstreamPastRPCTimeout(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "gateway.db")
	r := startReplica(t, "gateway", db, "--config", fixtureConfig(t, dir), "--rpc-timeout", "300ms")
	c := newMCPClient(r.url, createKey(t, db))
	defer c.close()
	ctx := t.Context()

	start := time.Now()
	a, err := c.execute(ctx, `return await mcp.fx.hang({})`)
	if err != nil || a.Status != wire.StatusError || a.ErrorCode != pmlerr.RPCTimeout || !strings.Contains(a.Error, "fx:hang") {
		t.Fatalf("want RPC_TIMEOUT naming fx:hang, got %v %s", err, a)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("RPC_TIMEOUT after %v, want about 300ms", d)
	}
	a, err = c.execute(ctx, `return await mcp.fx.echo({ text: "next" })`)
	if err != nil || a.Status != wire.StatusSuccess || string(a.Result) != `"next"` {
		t.Fatalf("the next call: %v %s %s", err, a, a.Result)
	}
}
