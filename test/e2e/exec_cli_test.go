package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pml-go/pml/internal/testfixture"
)

// Each answer status has its own exit status (README "Commands"), and a
// usage error runs nothing.
func TestExecExitStatuses(t *testing.T) {
	dir := t.TempDir()
	testfixture.WriteFile(t, dir, ".pml.json", `{"version": "1", "permissions": {"ask": ["crypto"]}}`)
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		status string
	}{
		{"success", []string{"exec", "return 1"}, 0, "success"},
		{"error", []string{"exec", "return ("}, 1, "error"},
		{"approval", []string{"exec", `return await mcp.crypto.sha256({data: "x"})`}, 2, "approval_required"},
		{"approved", []string{"exec", "--approve", `return await mcp.crypto.sha256({data: "x"})`}, 0, "success"},
	} {
		out, errOut, code := runPML(t, dir, nil, "", tc.args...)
		if a := execAnswer(t, out, errOut); code != tc.code || string(a.Status) != tc.status {
			t.Fatalf("%s: exit %d, status %s, want %d %s\n%s\n%s", tc.name, code, a.Status, tc.code, tc.status, out, errOut)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"exec"}, "no code"},
		{[]string{"exec", "return 1", "return 2"}, "one CODE argument at most"},
		{[]string{"exec", "--file", "x.ts", "return 1"}, "not both"},
		{[]string{"exec", "--no-such-flag", "return 1"}, "unknown flag: --no-such-flag"},
		{[]string{"exec", "--timeout", "soon", "return 1"}, "invalid argument"},
		{[]string{"exec", "--timeout", "-1s", "return 1"}, "--timeout must be positive"},
	} {
		out, errOut, code := runPML(t, dir, nil, "", tc.args...)
		if code != 4 || out != "" || !strings.Contains(errOut, tc.want) {
			t.Fatalf("%v: exit %d, stdout %q, stderr %q; want 4 and %q", tc.args, code, out, errOut, tc.want)
		}
	}
}

// Output is JSON as written, "<b>&" and all; --json prints one line.
func TestExecOutputUnescaped(t *testing.T) {
	dir := t.TempDir()
	out, errOut, code := runPML(t, dir, nil, "", "exec", "--json", `return {s: "<b>&</b>"}`)
	if code != 0 || strings.Count(out, "\n") != 1 || !strings.HasPrefix(out, `{"status":"success","result":{"s":"<b>&</b>"},`) {
		t.Fatalf("exit %d: %q\n%s", code, out, errOut)
	}
	out, errOut, code = runPML(t, dir, nil, "", "exec", `return "<b>&"`)
	if code != 0 || !strings.HasPrefix(out, "{\n  \"status\": \"success\",\n  \"result\": \"<b>&\",\n") {
		t.Fatalf("exit %d: %q\n%s", code, out, errOut)
	}
}

// --approve cannot supply a missing key: it stops at once, naming the key
// and the file it goes in; once the key is there the same command runs.
func TestExecApproveMissingKeyStops(t *testing.T) {
	ws := testfixture.Workspace(t, map[string]any{"fx": map[string]any{
		"command": testfixture.BuildServer(t),
		"env":     map[string]string{"TOKEN": "${FX_CLI_TOKEN}"},
	}})
	code := `return (await mcp.fx.env({name: "TOKEN"})).length`
	out, errOut, exit := runPML(t, ws, nil, "", "exec", "--approve", code)
	a := execAnswer(t, out, errOut)
	if exit != 1 || a.ErrorCode != "API_KEY_REQUIRED" || strings.Contains(errOut, "pml: approved") ||
		!strings.Contains(a.Error, "FX_CLI_TOKEN=") || !strings.Contains(a.Error, ws+"/.env") {
		t.Fatalf("exit %d: %s\n%s", exit, out, errOut)
	}
	testfixture.WriteFile(t, ws, ".env", "FX_CLI_TOKEN=abcdef\n")
	out, errOut, exit = runPML(t, ws, nil, "", "exec", "--approve", code)
	if a := execAnswer(t, out, errOut); exit != 0 || string(a.Result) != "6" {
		t.Fatalf("exit %d: %s\n%s", exit, out, errOut)
	}
}

// A CODE_ERROR's stack points where its line and column do: in the
// TypeScript as written, though stripping the types moved the lines.
func TestExecCodeErrorStackMatchesPosition(t *testing.T) {
	code := "interface Box {\n  n: number;\n}\nconst b: Box = {n: 1};\nconst f = (x: Box): number => {\n  throw new Error(\"boom \" + x.n);\n};\nreturn f(b);\n"
	out, errOut, exit := runPML(t, t.TempDir(), nil, "", "exec", code)
	a := execAnswer(t, out, errOut)
	stack, _ := a.Details["stack"].(string)
	line, _ := a.Details["line"].(float64)
	col, _ := a.Details["column"].(float64)
	if exit != 1 || a.ErrorCode != "CODE_ERROR" || line != 6 {
		t.Fatalf("exit %d: %s", exit, out)
	}
	if want := fmt.Sprintf("<eval>:%d:%d", int(line), int(col)); !strings.Contains(stack, want) {
		t.Fatalf("stack %q does not point at %s\n%s", stack, want, out)
	}
}

// An approval at the command line says what to do there, on stderr too:
// rerun with --approve, or allow the tool in .pml.json, naming it; without
// a .pml.json, `pml init` creates one (issue 30, items 2 and 9).
func TestExecApprovalSpeaksCommandLine(t *testing.T) {
	dir := t.TempDir()
	code := `return await mcp.shell.exec({command: "echo hi"})`
	for _, withConfig := range []bool{false, true} {
		if withConfig {
			testfixture.WriteFile(t, dir, ".pml.json", `{"version": "1", "permissions": {"allow": ["crypto"], "ask": ["shell"]}}`)
		}
		out, errOut, exit := runPML(t, dir, nil, "", "exec", code)
		a := execAnswer(t, out, errOut)
		if exit != 2 || a.Status != "approval_required" {
			t.Fatalf("exit %d\n%s\n%s", exit, out, errOut)
		}
		for _, text := range []string{a.Description, errOut} {
			for _, want := range []string{"--approve", `"shell:exec"`, "permissions", filepath.Join(dir, ".pml.json")} {
				if !strings.Contains(text, want) {
					t.Errorf("config %v: %q lacks %q", withConfig, text, want)
				}
			}
			if strings.Contains(text, "continue_workflow") || strings.Contains(text, "pml init") == withConfig {
				t.Errorf("config %v: %q", withConfig, text)
			}
		}
	}
}

// A malformed .pml.json is reported once on stderr, besides the answer
// (issue 30, item 9).
func TestExecInvalidConfigReportedOnce(t *testing.T) {
	dir := t.TempDir()
	testfixture.WriteFile(t, dir, ".pml.json", `{"version": "1", "permision": {}}`)
	out, errOut, exit := runPML(t, dir, nil, "", "exec", "return 1")
	a := execAnswer(t, out, errOut)
	if exit != 1 || a.ErrorCode != "INVALID_CONFIG" || !strings.Contains(a.Error, `did you mean "permissions"`) {
		t.Fatalf("exit %d\n%s\n%s", exit, out, errOut)
	}
	if n := strings.Count(errOut, "INVALID_CONFIG"); n != 1 {
		t.Fatalf("INVALID_CONFIG %d times on stderr:\n%s", n, errOut)
	}
}

// --timeout is the wall clock, and a run it ends says so in its terms, not
// as a CPU budget the command line cannot set (issue 30, item 5).
func TestExecTimeoutNamesTheFlag(t *testing.T) {
	out, errOut, exit := runPML(t, t.TempDir(), nil, "", "exec", "--timeout", "300ms", "for (;;) {}")
	a := execAnswer(t, out, errOut)
	if exit != 1 || a.ErrorCode != "EXECUTION_TIMEOUT" || !strings.Contains(a.Error, "--timeout 300ms") || strings.Contains(a.Error, "CPU") {
		t.Fatalf("exit %d\n%s\n%s", exit, out, errOut)
	}
}
