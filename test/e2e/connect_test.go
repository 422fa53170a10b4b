package e2e

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/testfixture"
)

// `pml connect --headless --name` against a real authorization server and
// the MCP server it protects (loopback): the token lands in the user config
// directory (0600 in a 0700 directory), never in the workspace; later runs
// call the server with it, refresh it when it expires, and without it fail
// with UNAUTHORIZED naming the command, the next run still served. No token
// ever appears in an answer, a log or a trace.
func TestConnectThenExecute(t *testing.T) {
	as := testfixture.StartOAuthServer(t)
	ws := t.TempDir()
	testfixture.WriteFile(t, ws, ".pml.json", `{"version": "1", "permissions": {"allow": ["notes", "crypto"]}}`)
	home := t.TempDir()
	env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, "xdg"), "PML_DEBUG=1"}
	var printed strings.Builder
	run := func(args ...string) (string, string, int) {
		out, errOut, code := runPML(t, ws, env, "", args...)
		printed.WriteString(out + errOut)
		return out, errOut, code
	}

	out, errOut, code := run("connect", "--headless", "--name", "notes", as.URL)
	if code != 0 || !strings.Contains(out, "1 tool(s)") || !strings.Contains(out, "echo") || !strings.Contains(out, "added notes") {
		t.Fatalf("connect: exit %d\n%s\n%s", code, out, errOut)
	}
	tokenDir := filepath.Join(home, "xdg", "pml", "oauth")
	files, _ := filepath.Glob(filepath.Join(tokenDir, "*.json"))
	if len(files) != 1 {
		t.Fatalf("token files %v", files)
	}
	if fi, err := os.Stat(files[0]); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file mode: %v %v", err, fi)
	}
	if di, err := os.Stat(tokenDir); err != nil || di.Mode().Perm() != 0o700 {
		t.Fatalf("token dir mode: %v %v", err, di)
	}
	var cfg struct {
		MCPServers map[string]map[string]string `json:"mcpServers"`
	}
	data, _ := os.ReadFile(filepath.Join(ws, ".pml.json"))
	if err := json.Unmarshal(data, &cfg); err != nil || cfg.MCPServers["notes"]["auth"] != "oauth" || cfg.MCPServers["notes"]["url"] != as.URL {
		t.Fatalf(".pml.json after connect: %v\n%s", err, data)
	}

	echo := func() (string, string, int) {
		return run("exec", "--json", `return await mcp.notes.echo({text: "hello"})`)
	}
	out, errOut, code = echo()
	if a := execAnswer(t, out, errOut); code != 0 || !strings.Contains(string(a.Result), "hello") {
		t.Fatalf("execute with the stored token: exit %d\n%s\n%s", code, out, errOut)
	}

	// Time passes: the stored token expires, and the server forgets it.
	var rec map[string]any
	data, _ = os.ReadFile(files[0])
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	rec["token"].(map[string]any)["expiry"] = time.Now().Add(-time.Hour).Format(time.RFC3339)
	data, _ = json.Marshal(rec)
	if err := os.WriteFile(files[0], data, 0o600); err != nil {
		t.Fatal(err)
	}
	as.ExpireAccessTokens()
	out, errOut, code = echo()
	if a := execAnswer(t, out, errOut); code != 0 || !strings.Contains(string(a.Result), "hello") || as.Grants("refresh_token") != 1 {
		t.Fatalf("execute with an expired token: exit %d, refreshes %d\n%s\n%s", code, as.Grants("refresh_token"), out, errOut)
	}

	// No token: a clear refusal, and the package keeps serving.
	if err := os.Remove(files[0]); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = echo()
	a := execAnswer(t, out, errOut)
	if code != 1 || a.ErrorCode != "UNAUTHORIZED" || !strings.Contains(a.Error, "pml connect "+as.URL) {
		t.Fatalf("execute without a token: exit %d\n%s\n%s", code, out, errOut)
	}
	out, errOut, code = run("exec", "--json", `return await mcp.crypto.sha256({data: "x"})`)
	if code != 0 {
		t.Fatalf("next request after the refusal: exit %d\n%s\n%s", code, out, errOut)
	}
	if _, errOut, code = run("connect", "--headless", as.URL); code != 0 {
		t.Fatalf("connect again: exit %d\n%s", code, errOut)
	}
	if out, errOut, code = echo(); code != 0 {
		t.Fatalf("execute after connecting again: exit %d\n%s\n%s", code, out, errOut)
	}

	// Nothing of any token in what was printed or anything under the workspace
	// (traces, logs, the local gateway's store).
	tokens := as.Issued()
	if len(tokens) < 4 {
		t.Fatalf("issued %d tokens", len(tokens))
	}
	for _, tok := range tokens {
		if strings.Contains(printed.String(), tok) {
			t.Fatalf("a token was printed:\n%s", printed.String())
		}
	}
	err := filepath.WalkDir(ws, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, tok := range tokens {
			if strings.Contains(string(data), tok) {
				t.Errorf("a token is in %s", path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Bad arguments are usage errors (exit 4) and --name problems are found
// before any authorization: nothing is stored, and the next connect works.
func TestConnectRefusals(t *testing.T) {
	as := testfixture.StartOAuthServer(t)
	home := t.TempDir()
	env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + home}
	bare := t.TempDir() // no .pml.json
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"connect", "ftp://127.0.0.1/mcp"}, 4, "not an http(s) URL"},
		{[]string{"connect"}, 4, "takes one URL"},
		{[]string{"connect", "--call", "echo", "--args", "[1]", as.URL}, 4, "--args must be a JSON object"},
		{[]string{"connect", "--headless", "--name", "notes", as.URL}, 1, "run `pml init` there first"},
	} {
		out, errOut, code := runPML(t, bare, env, "", tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.want) {
			t.Fatalf("%v: exit %d\n%s\n%s", tc.args, code, out, errOut)
		}
	}
	testfixture.WriteFile(t, bare, ".pml.json", `{"version": "1"}`)
	out, errOut, code := runPML(t, bare, env, "", "connect", "--headless", "--name", "a:b", as.URL)
	if code != 1 || !strings.Contains(errOut, "INVALID_REQUEST") || !strings.Contains(errOut, "bad server name") {
		t.Fatalf("bad name: exit %d\n%s\n%s", code, out, errOut)
	}
	if as.AuthorizationRequests() != 0 {
		t.Fatalf("a refused connect authorized anyway")
	}
	if entries, _ := os.ReadDir(filepath.Join(home, "pml", "oauth")); len(entries) != 0 {
		t.Fatalf("a refused connect stored %d files", len(entries))
	}
	out, errOut, code = runPML(t, bare, env, "", "connect", "--headless", "--call", "echo", "--args", `{"text":"ok"}`, as.URL)
	if code != 0 || !strings.Contains(out, `"text":"ok"`) {
		t.Fatalf("connect after refusals: exit %d\n%s\n%s", code, out, errOut)
	}
}
