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
// 127.0.0.1:0 --db gw.db` in dir, as a user would in another terminal, and
// returns its URL once it listens. It is killed when t ends.
func startGatewayProcess(t *testing.T, dir string, env []string) string {
	t.Helper()
	cmd := exec.Command(pmlBinary(t), "gateway", "--addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0", "--db", "gw.db")
	cmd.Dir, cmd.Env = dir, pmlEnv(env...)
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("pml gateway stderr:\n%s", stderr)
		}
	})
	var url string
	waitFor(t, callTimeout, "pml gateway to listen", func() bool {
		if m := gatewayListening.FindStringSubmatch(stderr.String()); m != nil {
			url = m[1]
		}
		return url != ""
	})
	return url
}

// The README's "First hour" section, command by command and in its order:
// keep the two in sync. Only what a test cannot take from the README
// differs: the fixture server stands for the user's stdio and sse servers,
// and ports are free ones instead of 8080 and 3003.
func TestFirstHourWalkthrough(t *testing.T) {
	// 1. `go install ./cmd/pml` with its directory on PATH: the built binary.
	bin := pmlBinary(t)
	env := []string{"PATH=" + filepath.Dir(bin) + string(os.PathListSeparator) + os.Getenv("PATH")}

	// 2. A project with Claude Code's .mcp.json: a stdio, an sse and a ws
	// server; `pml init -y`.
	fx := testfixture.BuildServer(t)
	sse := testfixture.StartHTTPServer(t, fx, "-sse")
	ws := t.TempDir()
	original := `{"mcpServers": {
  "notes": {"command": "` + fx + `"},
  "docs": {"type": "sse", "url": "` + sse.URL + `"},
  "chat": {"type": "ws", "url": "ws://127.0.0.1:9/"}
}}
`
	testfixture.WriteFile(t, ws, ".mcp.json", original)
	out, errOut, code := runPML(t, ws, env, "", "init", "-y")
	if code != 0 {
		t.Fatalf("pml init -y: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"moved servers into .pml.json: docs, notes", "allowed without asking: docs, notes", `left "chat"`, `not "ws"`} {
		if !strings.Contains(out, want) {
			t.Errorf("pml init output lacks %q:\n%s", want, out)
		}
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
		!slices.Contains(cfg.Permissions.Allow, "notes") || !slices.Contains(cfg.Permissions.Allow, "docs") {
		t.Fatalf("after init --force: %+v %v", cfg, err)
	}

	// 4. The first hybrid run.
	testfixture.WriteFile(t, ws, "data.json", `{"items": [3, 4, 5]}`+"\n")
	out, errOut, code = runPML(t, ws, env, "", "exec",
		`const d = await mcp.filesystem.read_file({path: "data.json"}); const p = await mcp.json.parse({data: d}); return {sum: await mcp.notes.add({a: p.items[0], b: p.items[2]}), echo: await mcp.docs.echo({text: "hi"})}`)
	a := execAnswer(t, out, errOut)
	var res struct {
		Sum  struct{ Sum int } `json:"sum"`
		Echo string            `json:"echo"`
	}
	if code != 0 {
		t.Fatalf("pml exec: exit %d\n%s\n%s", code, out, errOut)
	}
	wantLocal(t, a, &res)
	if res.Sum.Sum != 8 || res.Echo != "hi" {
		t.Fatalf("result %s", a.Result)
	}
	if got, want := toolsUsed(t, a), []string{"docs:echo", "filesystem:read_file", "json:parse", "notes:add"}; !slices.Equal(got, want) {
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
	for _, want := range []string{"filesystem:read_file  client", "json:parse  server", "notes:add  client", "docs:echo  client"} {
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
