package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/testfixture"
	"github.com/pml-go/pml/internal/wire"
	"github.com/pml-go/pml/internal/workspace"
)

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// claudeServer is one .mcp.json entry as Claude Code reads it.
type claudeServer struct {
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
}

func readMCPJSON(t *testing.T, path string) map[string]claudeServer {
	t.Helper()
	var m struct {
		MCPServers map[string]claudeServer `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(readFile(t, path)), &m); err != nil {
		t.Fatal(err)
	}
	return m.MCPServers
}

const existingMCPJSON = `{
  "mcpServers": {
    "github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}},
    "docs": {"type": "http", "url": "https://docs.example/mcp"},
    "pml": {"command": "old-pml", "args": ["stdio"]}
  }
}
`

// pml init in a workspace that already has a Claude Code .mcp.json: the
// other servers move into .pml.json, the original is backed up, .mcp.json
// now starts pml stdio, and .gitignore gains the PML entries.
func TestInitMigratesExistingMCPJSON(t *testing.T) {
	ws := t.TempDir()
	testfixture.WriteFile(t, ws, ".mcp.json", existingMCPJSON)
	testfixture.WriteFile(t, ws, ".gitignore", "node_modules/")
	testfixture.WriteFile(t, ws, ".mcp.json.bak", "an older backup")
	out, errOut, code := runPML(t, ws, []string{"PML_WORKSPACE=" + ws}, "", "init", "-y")
	if code != 0 {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}

	cfg, err := workspace.LoadConfig(filepath.Join(ws, ".pml.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.MCPServers) != 2 || cfg.MCPServers["github"].Command != "npx" || cfg.MCPServers["docs"].URL != "https://docs.example/mcp" {
		t.Fatalf("migrated servers %+v", cfg.MCPServers)
	}
	if cfg.MCPServers["github"].Env["GITHUB_TOKEN"] != "${GITHUB_TOKEN}" {
		t.Fatal("the ${VAR} reference was not kept as written")
	}
	if cfg.Version == "" || len(cfg.Permissions.Allow) == 0 || cfg.Cloud.URL != "" {
		t.Fatalf("config %+v", cfg)
	}
	if got := readFile(t, filepath.Join(ws, ".mcp.json.bak.1")); got != existingMCPJSON {
		t.Fatalf("backup differs from the original:\n%s", got)
	}
	if readFile(t, filepath.Join(ws, ".mcp.json.bak")) != "an older backup" {
		t.Fatal("init overwrote an earlier backup")
	}
	servers := readMCPJSON(t, filepath.Join(ws, ".mcp.json"))
	if len(servers) != 1 || servers["pml"].Command != pmlBinary(t) || !slices.Equal(servers["pml"].Args, []string{"stdio"}) {
		t.Fatalf(".mcp.json servers %+v", servers)
	}
	gi := readFile(t, filepath.Join(ws, ".gitignore"))
	for _, line := range []string{"node_modules/", ".pml.json", ".pml/"} {
		if !slices.Contains(strings.Split(gi, "\n"), line) {
			t.Fatalf(".gitignore lacks %q:\n%s", line, gi)
		}
	}

	// A second init refuses to overwrite, and changes nothing.
	before := readFile(t, filepath.Join(ws, ".pml.json"))
	out, errOut, code = runPML(t, ws, []string{"PML_WORKSPACE=" + ws}, "", "init", "-y")
	if code == 0 || !strings.Contains(errOut, "--force") {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}
	if readFile(t, filepath.Join(ws, ".pml.json")) != before {
		t.Fatal("a refused init changed .pml.json")
	}

	// --force rewrites it, without losing the servers migrated before nor
	// the original backup, and without duplicating .gitignore entries.
	out, errOut, code = runPML(t, ws, []string{"PML_WORKSPACE=" + ws}, "", "init", "-y", "--force", "--cloud-url", "http://127.0.0.1:9", "--api-key", "k-123")
	if code != 0 {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}
	cfg, err = workspace.LoadConfig(filepath.Join(ws, ".pml.json"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Cloud.URL != "http://127.0.0.1:9" || len(cfg.MCPServers) != 2 {
		t.Fatalf("forced init: %+v", cfg)
	}
	if got := readFile(t, filepath.Join(ws, ".mcp.json.bak.1")); got != existingMCPJSON {
		t.Fatalf("forced init overwrote the backup of the original:\n%s", got)
	}
	if _, err := os.Stat(filepath.Join(ws, ".mcp.json.bak.2")); err == nil {
		t.Fatal("forced init backed up a .mcp.json with nothing to migrate")
	}
	if !strings.Contains(readFile(t, filepath.Join(ws, ".env")), "PML_API_KEY=k-123") {
		t.Fatal("the API key is not in .env")
	}
	gi = readFile(t, filepath.Join(ws, ".gitignore"))
	if strings.Count(gi, ".pml.json") != 1 || !strings.Contains(gi, ".env") {
		t.Fatalf(".gitignore after the second init:\n%s", gi)
	}
}

// The .mcp.json init writes is what the AI client runs: starting exactly
// its command gives a working package.
func TestInitThenAIClientStartsPML(t *testing.T) {
	ws := t.TempDir()
	if out, errOut, code := runPML(t, ws, nil, "", "init", "-y"); code != 0 {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}
	entry := readMCPJSON(t, filepath.Join(ws, ".mcp.json"))["pml"]
	cmd := exec.Command(entry.Command, entry.Args...)
	cmd.Env = pmlEnv()
	for k, v := range entry.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Dir = t.TempDir() // the AI client's cwd need not be the workspace
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	s, err := mcp.NewClient(&mcp.Implementation{Name: "claude-like", Version: "0"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	testfixture.WriteFile(t, ws, "todo.txt", "ship it")
	var text string
	wantLocal(t, callExecute(t, s, wire.ExecuteRequest{Code: `return await mcp.filesystem.read_file({path: "todo.txt"})`}), &text)
	if text != "ship it" {
		t.Fatalf("got %q", text)
	}
}
