package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// npmFilesystemServer returns the mcpServers entry that runs the npm reference
// server @modelcontextprotocol/server-filesystem (installed by `npm ci` in
// test/peer) confined to dir.
func npmFilesystemServer(t testing.TB, dir string) map[string]any {
	t.Helper()
	return npmServer(t, "@modelcontextprotocol/server-filesystem/dist/index.js", dir)
}

// npmServer returns the mcpServers entry that runs script, a path under
// test/peer/node_modules (installed by `npm ci` there), with args. Without
// node or the install the test is skipped, unless PML_REQUIRE_NODE=1 (CI)
// makes that a failure.
func npmServer(t testing.TB, script string, args ...string) map[string]any {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("..", "peer", "node_modules", filepath.FromSlash(script)))
	if err != nil {
		t.Fatal(err)
	}
	node, nodeErr := exec.LookPath("node")
	_, scriptErr := os.Stat(script)
	if nodeErr != nil || scriptErr != nil {
		msg := "node or an npm MCP server is missing (run `npm ci` in test/peer)"
		if os.Getenv("PML_REQUIRE_NODE") == "1" {
			t.Fatalf("%s: node: %v; server: %v", msg, nodeErr, scriptErr)
		}
		t.Skip(msg)
	}
	return map[string]any{"command": node, "args": append([]string{script}, args...)}
}
