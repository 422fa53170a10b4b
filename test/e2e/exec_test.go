package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/testfixture"
	"github.com/pml-go/pml/internal/wire"
)

// runPML runs the pml binary in dir and returns its stdout, stderr and exit code.
func runPML(t *testing.T, dir string, env []string, stdin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(pmlBinary(t), args...)
	cmd.Dir, cmd.Env, cmd.Stdin = dir, pmlEnv(env...), strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return stdout.String(), stderr.String(), exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), 0
}

// execAnswer decodes `pml exec`'s stdout.
func execAnswer(t *testing.T, stdout, stderr string) wire.Answer {
	t.Helper()
	var a wire.Answer
	if err := json.Unmarshal([]byte(stdout), &a); err != nil {
		t.Fatalf("pml exec printed no answer JSON: %v\nstdout: %s\nstderr: %s", err, stdout, stderr)
	}
	return a
}

// The README's main command on a fresh directory: no server, no config, no
// key. Local mode runs the gateway in-process with its SQLite under .pml/.
func TestExecLocalModeFreshDirectory(t *testing.T) {
	dir := t.TempDir()
	out, errOut, code := runPML(t, dir, nil, "", "exec",
		`const s = await mcp.crypto.sha256({data: "hi"}); const f = await mcp.filesystem.list_directory({path: "."}); return {s, files: f.length}`)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	var res struct {
		S     string `json:"s"`
		Files *int   `json:"files"`
	}
	wantLocal(t, execAnswer(t, out, errOut), &res)
	if res.S != "8f434346648f6b96df89dda901c5176b10a6d83961dd3c1ac88b59b2dc327aa4" || res.Files == nil {
		t.Fatalf("result %+v", res)
	}
	if _, err := os.Stat(filepath.Join(dir, ".pml", "gateway.db")); err != nil {
		t.Fatalf("local mode did not keep its store under .pml/: %v", err)
	}

	// Server-only code runs on the in-process gateway.
	out, errOut, code = runPML(t, dir, nil, "", "exec", `return await mcp.math.add({a: 1, b: 2})`)
	a := execAnswer(t, out, errOut)
	if code != 0 || string(a.Result) != "3" || a.ExecutedLocally == nil || *a.ExecutedLocally {
		t.Fatalf("exit %d: %s", code, out)
	}
}

// The snippet from a file or stdin; a failing snippet prints its error
// answer and exits non-zero.
func TestExecInputsAndFailures(t *testing.T) {
	dir := t.TempDir()
	testfixture.WriteFile(t, dir, "snippet.ts", `const n: number = 40; return n + 2;`)
	for _, args := range [][]string{{"exec", "--file", "snippet.ts"}, {"exec", "--file", "-"}} {
		out, errOut, code := runPML(t, dir, nil, `const n: number = 40; return n + 2;`, args...)
		if a := execAnswer(t, out, errOut); code != 0 || string(a.Result) != "42" {
			t.Fatalf("%v: exit %d: %s", args, code, out)
		}
	}
	out, errOut, code := runPML(t, dir, nil, "", "exec", "return (")
	if a := execAnswer(t, out, errOut); code != 1 || a.ErrorCode != "SYNTAX_ERROR" {
		t.Fatalf("exit %d: %s", code, out)
	}
	if _, errOut, code := runPML(t, dir, nil, "", "exec"); code != 4 || !strings.Contains(errOut, "no code") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}

// With a cloud URL, pml exec takes the AI client's path: the gateway
// answers execute_locally and the server tool goes back to it.
func TestExecAgainstGateway(t *testing.T) {
	g := startGateway(t, gateway.Options{})
	ws := testfixture.Workspace(t, nil)
	testfixture.WriteFile(t, ws, "in.json", `{"v": 7}`)
	out, errOut, code := runPML(t, ws, gatewayEnv(g), "", "exec",
		`const d = await mcp.json.parse({data: await mcp.filesystem.read_file({path: "in.json"})}); return d.v * 6`)
	if a := execAnswer(t, out, errOut); code != 0 || string(a.Result) != "42" || a.ExecutedLocally == nil || !*a.ExecutedLocally {
		t.Fatalf("exit %d: %s\n%s", code, out, errOut)
	}
	if got := callsTo(g); len(got) != 1 || got[0] != "json:parse" {
		t.Fatalf("gateway calls %v", got)
	}
	wantPackageHeaders(t, g)
}
