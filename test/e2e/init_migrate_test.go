package e2e

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pml-go/pml/internal/testfixture"
	"github.com/pml-go/pml/internal/workspace"
)

// rawMCPJSON reads .mcp.json with every key as written.
func rawMCPJSON(t *testing.T, path string) (map[string]json.RawMessage, map[string]json.RawMessage) {
	t.Helper()
	var top, servers map[string]json.RawMessage
	if err := json.Unmarshal([]byte(readFile(t, path)), &top); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(top["mcpServers"], &servers); err != nil {
		t.Fatal(err)
	}
	return top, servers
}

// Claude Code's .mcp.json with an sse server, a server type PML cannot run,
// an entry with a key PML would drop, a stdio server and a key of its own:
// init moves exactly what PML runs, allows it, leaves the rest (and the
// unknown key) to the AI client, and the next executions work, the sse
// server's tools without asking. --force keeps the user's permission edits.
func TestInitMigratesWhatPMLRuns(t *testing.T) {
	bin := testfixture.BuildServer(t)
	sse := testfixture.StartHTTPServer(t, bin, "-sse")
	ws := t.TempDir()
	mcpJSON := `{
  "mcpServers": {
    "legacy": {"type": "sse", "url": "` + sse.URL + `"},
    "fx": {"command": "` + bin + `"},
    "sock": {"type": "ws", "url": "ws://127.0.0.1:9/"},
    "odd": {"command": "` + bin + `", "timeout": 5}
  },
  "claudeSetting": {"kept": true}
}
`
	testfixture.WriteFile(t, ws, ".mcp.json", mcpJSON)
	env := []string{"PML_WORKSPACE=" + ws}
	out, errOut, code := runPML(t, ws, env, "", "init")
	if code != 0 {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}
	for _, want := range []string{"stdin is not a terminal: taking the defaults", "moved servers into .pml.json: fx, legacy",
		"allowed without asking: fx, legacy", `left "odd"`, `unknown key "timeout"`, `left "sock"`, `not "ws"`} {
		if !strings.Contains(out, want) {
			t.Errorf("init output lacks %q:\n%s", want, out)
		}
	}
	cfg, err := workspace.LoadConfig(filepath.Join(ws, ".pml.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.MCPServers) != 2 || cfg.MCPServers["legacy"].Type != "sse" || !slices.Contains(cfg.Permissions.Allow, "legacy") || !slices.Contains(cfg.Permissions.Allow, "fx") {
		t.Fatalf("config %+v", cfg)
	}
	top, servers := rawMCPJSON(t, filepath.Join(ws, ".mcp.json"))
	var kept struct{ Kept bool }
	if json.Unmarshal(top["claudeSetting"], &kept) != nil || !kept.Kept {
		t.Fatalf(".mcp.json lost an unknown key: %s", readFile(t, filepath.Join(ws, ".mcp.json")))
	}
	if len(servers) != 3 || servers["sock"] == nil || servers["odd"] == nil || servers["pml"] == nil {
		t.Fatalf(".mcp.json servers: %s", readFile(t, filepath.Join(ws, ".mcp.json")))
	}

	out, errOut, code = runPML(t, ws, env, "", "exec", "return 1+1")
	if a := execAnswer(t, out, errOut); code != 0 || string(a.Result) != "2" {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}
	out, errOut, code = runPML(t, ws, env, "", "exec", "return await mcp.legacy.add({a: 1, b: 2})")
	var sum struct{ Sum int }
	if a := execAnswer(t, out, errOut); code != 0 || a.Status != "success" || json.Unmarshal(a.Result, &sum) != nil || sum.Sum != 3 {
		t.Fatalf("sse server through pml: exit %d: %s %s", code, out, errOut)
	}

	// The user denies the shell; init --force keeps that, and still
	// leaves the unknown key and the servers it cannot run in .mcp.json.
	cfg.Permissions.Deny = append(cfg.Permissions.Deny, "shell")
	data, _ := json.Marshal(cfg)
	testfixture.WriteFile(t, ws, ".pml.json", string(data))
	if out, errOut, code = runPML(t, ws, env, "", "init", "-y", "--force"); code != 0 {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}
	if strings.Contains(out, "stdin is not a terminal") {
		t.Fatalf("-y said it took the defaults for lack of a terminal:\n%s", out)
	}
	cfg, err = workspace.LoadConfig(filepath.Join(ws, ".pml.json"))
	if err != nil || !slices.Contains(cfg.Permissions.Deny, "shell") || !slices.Contains(cfg.Permissions.Allow, "legacy") || len(cfg.MCPServers) != 2 {
		t.Fatalf("forced init lost the user's settings: %+v %v", cfg, err)
	}
	top, servers = rawMCPJSON(t, filepath.Join(ws, ".mcp.json"))
	if top["claudeSetting"] == nil || len(servers) != 3 {
		t.Fatalf(".mcp.json after --force: %s", readFile(t, filepath.Join(ws, ".mcp.json")))
	}
}

// A misspelt key in .pml.json is INVALID_CONFIG naming the key and the
// likely intended one; once fixed, the next command works.
func TestPMLJSONUnknownKeyRefused(t *testing.T) {
	ws := t.TempDir()
	env := []string{"PML_WORKSPACE=" + ws}
	if out, errOut, code := runPML(t, ws, env, "", "init", "-y"); code != 0 {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}
	good := readFile(t, filepath.Join(ws, ".pml.json"))
	testfixture.WriteFile(t, ws, ".pml.json", strings.Replace(good, `"permissions"`, `"permisions"`, 1))
	out, errOut, code := runPML(t, ws, env, "", "exec", "return 1+1")
	if code == 0 || !strings.Contains(out+errOut, "INVALID_CONFIG") || !strings.Contains(out+errOut, `unknown key \"permisions\" (did you mean \"permissions\"?)`) {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}
	testfixture.WriteFile(t, ws, ".pml.json", good)
	out, errOut, code = runPML(t, ws, env, "", "exec", "return 1+1")
	if a := execAnswer(t, out, errOut); code != 0 || string(a.Result) != "2" {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}
}

// `go run ./cmd/pml init` runs a binary that is deleted when go run exits:
// init refuses to write it into .mcp.json, says how to install pml, and
// writes the pml found on PATH once there is one.
func TestInitFromGoRunBuild(t *testing.T) {
	data, err := os.ReadFile(pmlBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	tmpBuild := filepath.Join(t.TempDir(), "go-build123", "b001", "exe", "pml")
	installed := filepath.Join(t.TempDir(), "bin", "pml")
	for _, p := range []string{tmpBuild, installed} {
		testfixture.WriteFile(t, filepath.Dir(p), filepath.Base(p), "")
		if err := os.WriteFile(p, data, 0o755); err != nil || os.Chmod(p, 0o755) != nil {
			t.Fatal(err)
		}
	}
	ws := t.TempDir()
	run := func(path string) (string, int) {
		cmd := exec.Command(tmpBuild, "init", "-y")
		cmd.Dir, cmd.Env = ws, pmlEnv("PML_WORKSPACE="+ws, "PATH="+path)
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatal(err)
		}
		return string(out), cmd.ProcessState.ExitCode()
	}
	out, code := run(t.TempDir())
	if code == 0 || !strings.Contains(out, "go install ./cmd/pml") {
		t.Fatalf("exit %d: %s", code, out)
	}
	if _, err := os.Stat(filepath.Join(ws, ".pml.json")); err == nil {
		t.Fatal("a refused init wrote .pml.json")
	}
	out, code = run(filepath.Dir(installed))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	if got := readMCPJSON(t, filepath.Join(ws, ".mcp.json"))["pml"].Command; got != installed {
		t.Fatalf(".mcp.json starts %q, want the pml on PATH %q", got, installed)
	}
}
