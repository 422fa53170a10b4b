//go:build linux

package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pml-go/pml/internal/testfixture"
	"github.com/pml-go/pml/internal/workspace"
)

// gatewayListening is the API listener's log line; the metrics listener's
// carries server=metrics and does not match.
var gatewayListening = regexp.MustCompile(`msg=listening addr=(http://\S+)`)

// startGatewayProcess runs `pml gateway --addr 127.0.0.1:0 --metrics-addr
// 127.0.0.1:0 --db gw.db [args]` in dir, as a user would in another
// terminal, and returns its URL once it listens. It is killed when t ends.
func startGatewayProcess(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(pmlBinary(t), append([]string{"gateway", "--addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0", "--db", "gw.db"}, args...)...)
	cmd.Dir, cmd.Env = dir, pmlEnv(env...)
	stderr := startKilledAtEnd(t, cmd, "pml gateway")
	var url string
	waitFor(t, callTimeout, "pml gateway to listen", func() bool {
		if m := gatewayListening.FindStringSubmatch(stderr.String()); m != nil {
			url = m[1]
		}
		return url != ""
	})
	return url
}

// The README's "First hour" commands, as the README shows them.
const (
	walkEverythingCmd = "PORT=3001 npx -y @modelcontextprotocol/server-everything streamableHttp"
	walkMCPJSON       = `{"mcpServers": {
  "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]},
  "everything": {"type": "http", "url": "http://127.0.0.1:3001/mcp"},
  "chat": {"type": "ws", "url": "ws://127.0.0.1:9001/"}
}}`
	walkExec = `const d = await mcp.filesystem.read_file({path: "data.json"}); const p = await mcp.json.parse({data: d}); const g = await mcp.memory.read_graph({}); return {entities: g.entities.length, echo: await mcp.everything.echo({message: "sum " + (p.items[0] + p.items[2])})}`
)

// npxShim returns a directory with an `npx` that runs the npm packages of
// the First hour from test/peer/node_modules (`npm ci` there): the README's
// npx commands run as written, with no registry (tests talk only to
// loopback). Without node or the install the test is skipped, unless
// PML_REQUIRE_NODE=1.
func npxShim(t *testing.T) string {
	t.Helper()
	memory := npmServer(t, "@modelcontextprotocol/server-memory/dist/index.js")
	everything := npmServer(t, "@modelcontextprotocol/server-everything/dist/index.js")
	script := func(e map[string]any) string { return e["args"].([]string)[0] }
	dir := t.TempDir()
	shim := "#!/bin/sh\n# npx for the First hour walkthrough: the packages installed in test/peer.\n" +
		"[ \"$1\" = -y ] && shift\npkg=$1; shift\ncase \"$pkg\" in\n" +
		"@modelcontextprotocol/server-memory) exec \"" + memory["command"].(string) + "\" \"" + script(memory) + "\" \"$@\";;\n" +
		"@modelcontextprotocol/server-everything) exec \"" + everything["command"].(string) + "\" \"" + script(everything) + "\" \"$@\";;\n" +
		"esac\necho \"npx shim: no $pkg in test/peer\" >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(dir, "npx"), []byte(shim), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// startEverything runs the README's command for the Streamable HTTP server
// (its port a free one) and returns its MCP URL once it listens. It is
// killed when t ends.
func startEverything(t *testing.T, env []string) string {
	t.Helper()
	port := strconv.Itoa(freePort(t))
	fields := strings.Fields(strings.Replace(walkEverythingCmd, "PORT=3001", "", 1))
	cmd := exec.Command(fields[0], fields[1:]...)
	cmd.Dir, cmd.Env = t.TempDir(), append(pmlEnv(env...), "PORT="+port)
	if p, err := lookPathIn(env, fields[0]); err == nil {
		cmd.Path = p
	}
	stderr := startKilledAtEnd(t, cmd, "everything server")
	waitFor(t, callTimeout, "the everything server to listen", func() bool {
		return strings.Contains(stderr.String(), "listening on port "+port)
	})
	return "http://127.0.0.1:" + port + "/mcp"
}

// lookPathIn finds name on the PATH of env (the last PATH= entry).
func lookPathIn(env []string, name string) (string, error) {
	for i := len(env) - 1; i >= 0; i-- {
		if path, ok := strings.CutPrefix(env[i], "PATH="); ok {
			for _, dir := range filepath.SplitList(path) {
				if fi, err := os.Stat(filepath.Join(dir, name)); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
					return filepath.Join(dir, name), nil
				}
			}
		}
	}
	return exec.LookPath(name)
}

// The README's "First hour" section, command by command and in its order:
// keep the two in sync (the test checks that the README shows the commands
// it runs). Only what a test cannot take from the README differs: `npx`
// runs the packages installed in test/peer (npxShim), and ports are free
// ones instead of 3001, 8080 and 3003.
func TestFirstHourWalkthrough(t *testing.T) {
	// Its blocks are indented under list items: compared without that.
	readme := strings.ReplaceAll(readFile(t, filepath.Join("..", "..", "README.md")), "\n   ", "\n")
	for _, shown := range []string{walkEverythingCmd, walkMCPJSON, "pml init -y", "pml exec '" + walkExec + "'"} {
		if !strings.Contains(readme, shown) {
			t.Fatalf("the README's First hour does not show what this test runs:\n%s", shown)
		}
	}
	// 1. `npm install -g @pml-go/pml` or `go install ./cmd/pml`: the built
	// binary on PATH (.ci/release-check runs the npm launcher itself);
	// and npx (here the shim).
	bin := pmlBinary(t)
	env := []string{"PATH=" + npxShim(t) + string(os.PathListSeparator) + filepath.Dir(bin) + string(os.PathListSeparator) + os.Getenv("PATH")}

	// 2. The Streamable HTTP server in its own terminal; a project with
	// Claude Code's .mcp.json: a stdio, an http and a ws server; `pml init -y`.
	everythingURL := startEverything(t, env)
	ws := t.TempDir()
	original := strings.Replace(walkMCPJSON, "http://127.0.0.1:3001/mcp", everythingURL, 1) + "\n"
	testfixture.WriteFile(t, ws, ".mcp.json", original)
	out, errOut, code := runPML(t, ws, env, "", "init", "-y")
	if code != 0 {
		t.Fatalf("pml init -y: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"moved servers into .pml.json: everything, memory", "allowed without asking: everything, memory", `left "chat"`, `not "ws"`} {
		if !strings.Contains(out, want) {
			t.Errorf("pml init output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "warning:") {
		t.Errorf("pml init warned:\n%s", out)
	}
	if got := readFile(t, filepath.Join(ws, ".mcp.json.bak")); got != original {
		t.Fatalf(".mcp.json.bak is not the original:\n%s", got)
	}
	left := readMCPJSON(t, filepath.Join(ws, ".mcp.json"))
	if _, ok := left["chat"]; len(left) != 2 || !ok || left["pml"].Command != bin || !slices.Equal(left["pml"].Args, []string{"stdio"}) {
		t.Fatalf(".mcp.json: %s", readFile(t, filepath.Join(ws, ".mcp.json")))
	}
	gitignore := readFile(t, filepath.Join(ws, ".gitignore"))
	for _, want := range []string{".pml.json\n", ".pml/\n", ".env"} {
		if !strings.Contains(gitignore, want) {
			t.Fatalf(".gitignore lacks %q:\n%s", want, gitignore)
		}
	}

	// 3. A remote gateway, an API key, and init pointing the project at it.
	gwDir := t.TempDir()
	gwURL := startGatewayProcess(t, gwDir, env)
	out, errOut, code = runPML(t, gwDir, env, "", "gateway", "key", "create", "--db", "gw.db", "--org", "acme", "--project", "web")
	key := strings.TrimSpace(out)
	if code != 0 || !strings.HasPrefix(key, "pml_") || strings.Contains(key, "\n") {
		t.Fatalf("pml gateway key create: exit %d\n%s\n%s", code, out, errOut)
	}
	out, errOut, code = runPML(t, ws, env, "", "init", "--force", "--cloud-url", gwURL, "--api-key", key)
	if code != 0 || !strings.Contains(out, "stored PML_API_KEY in .env") {
		t.Fatalf("pml init --force --cloud-url: exit %d\n%s\n%s", code, out, errOut)
	}
	if dotEnv := readFile(t, filepath.Join(ws, ".env")); !strings.Contains(dotEnv, "PML_API_KEY="+key+"\n") {
		t.Fatalf(".env: %s", dotEnv)
	}
	cfg, err := workspace.LoadConfig(filepath.Join(ws, ".pml.json"))
	if err != nil || cfg.Cloud.URL != gwURL || len(cfg.MCPServers) != 2 ||
		!slices.Contains(cfg.Permissions.Allow, "memory") || !slices.Contains(cfg.Permissions.Allow, "everything") {
		t.Fatalf("after init --force: %+v %v", cfg, err)
	}

	// 4. The first hybrid run.
	testfixture.WriteFile(t, ws, "data.json", `{"items": [3, 4, 5]}`+"\n")
	out, errOut, code = runPML(t, ws, env, "", "exec", walkExec)
	a := execAnswer(t, out, errOut)
	var res struct {
		Entities *int   `json:"entities"`
		Echo     string `json:"echo"`
	}
	if code != 0 {
		t.Fatalf("pml exec: exit %d\n%s\n%s", code, out, errOut)
	}
	wantLocal(t, a, &res)
	if res.Entities == nil || *res.Entities != 0 || res.Echo != "Echo: sum 8" || !strings.Contains(readme, `"result": {"entities": 0, "echo": "Echo: sum`) {
		t.Fatalf("result %s", a.Result)
	}
	if got, want := toolsUsed(t, a), []string{"everything:echo", "filesystem:read_file", "json:parse", "memory:read_graph"}; !slices.Equal(got, want) {
		t.Fatalf("tools_used %v, want %v", got, want)
	}

	// 5. Its trace: the list and the tree, read from the gateway (no local
	// store was made), with each call's side.
	out, errOut, code = runPML(t, ws, env, "", "traces")
	if code != 0 || !strings.Contains(out, a.TraceID) || !strings.Contains(out, "1 of 1 executions") {
		t.Fatalf("pml traces: exit %d\n%s\n%s", code, out, errOut)
	}
	out, errOut, code = runPML(t, ws, env, "", "traces", a.TraceID)
	if code != 0 || !strings.HasPrefix(out, "execution "+a.TraceID+"  success") {
		t.Fatalf("pml traces ID: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"filesystem:read_file  client", "json:parse  server", "memory:read_graph  client", "everything:echo  client"} {
		if !strings.Contains(out, want) {
			t.Fatalf("pml traces ID lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(ws, workspace.StateDir, "gateway.db")); !os.IsNotExist(err) {
		t.Fatalf("a local store exists beside the remote gateway: %v", err)
	}

	// Not startServe: the README runs serve in the project directory,
	// without PML_WORKSPACE.
	port := freePort(t)
	serve := exec.Command(bin, "serve", "--port", strconv.Itoa(port))
	serve.Dir, serve.Env = ws, pmlEnv(env...)
	serveErr := &lockedBuffer{}
	serve.Stderr = serveErr
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = serve.Process.Kill(); _ = serve.Wait() })
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	viewer := regexp.MustCompile(`Trace viewer: ` + regexp.QuoteMeta(base) + `/#token=(\S+)\n`)
	var token string
	waitFor(t, callTimeout, "pml serve to print the viewer's address", func() bool {
		if m := viewer.FindStringSubmatch(serveErr.String()); m != nil {
			token = m[1]
		}
		return token != ""
	})
	req, err := http.NewRequest(http.MethodGet, base+"/api/traces", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var page struct {
		Traces []struct {
			TraceID string `json:"trace_id"`
		} `json:"traces"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &page) != nil || len(page.Traces) != 1 || page.Traces[0].TraceID != a.TraceID {
		t.Fatalf("the viewer's API: %d %s", resp.StatusCode, body)
	}
}

// startKilledAtEnd starts cmd, kills it when t ends (showing its stderr,
// named what, if t failed) and returns the buffer its stderr fills.
func startKilledAtEnd(t *testing.T, cmd *exec.Cmd, what string) *lockedBuffer {
	t.Helper()
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("%s stderr:\n%s", what, stderr)
		}
	})
	return stderr
}
