package e2e

import (
	"strings"
	"testing"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/testfixture"
)

// --args sets the code's global args wherever the code runs: in the package
// (a client-routed plan, with the gateway up or unreachable) and on the
// gateway (server-only code).
func TestExecArgs(t *testing.T) {
	g := startGateway(t, gateway.Options{})
	dead := startGateway(t, gateway.Options{})
	dead.kill()
	ws := testfixture.Workspace(t, nil)
	testfixture.WriteFile(t, ws, "n.txt", "x")
	for _, tc := range []struct {
		name   string
		env    []string
		code   string
		local  bool
		result string
	}{
		{"offline", gatewayEnv(dead), `const t = await mcp.filesystem.read_file({path: "n.txt"}); return args.n + t.length`, true, "42"},
		{"client plan", gatewayEnv(g), `const t = await mcp.filesystem.read_file({path: "n.txt"}); return args.n + t.length`, true, "42"},
		{"gateway", gatewayEnv(g), "return args.n + 1", false, "42"},
		{"server tool", gatewayEnv(g), "return await mcp.math.add({a: args.n, b: 1})", false, "42"},
	} {
		out, errOut, code := runPML(t, ws, tc.env, "", "exec", "--args", `{"n":41}`, tc.code)
		a := execAnswer(t, out, errOut)
		if code != 0 || string(a.Result) != tc.result || a.ExecutedLocally == nil || *a.ExecutedLocally != tc.local {
			t.Fatalf("%s: exit %d, want %s executed_locally=%v\n%s\n%s", tc.name, code, tc.result, tc.local, out, errOut)
		}
	}
	// Without --args, args is {}.
	out, errOut, code := runPML(t, ws, gatewayEnv(g), "", "exec", "--json", "return Object.keys(args).length")
	if a := execAnswer(t, out, errOut); code != 0 || string(a.Result) != "0" {
		t.Fatalf("no args: exit %d\n%s\n%s", code, out, errOut)
	}
}

// Bad --args is a usage error: nothing runs, nothing reaches the gateway,
// and the next command works.
func TestExecBadArgs(t *testing.T) {
	g := startGateway(t, gateway.Options{})
	ws := testfixture.Workspace(t, nil)
	for _, tc := range []struct{ args, want string }{
		{`{"n":`, "--args is not JSON"},
		{`[1]`, "--args must be a JSON object"},
		{`"x"`, "--args must be a JSON object"},
		{`null`, "--args must be a JSON object"},
	} {
		out, errOut, code := runPML(t, ws, gatewayEnv(g), "", "exec", "--args", tc.args, "return 1")
		if code != 4 || out != "" || !strings.Contains(errOut, tc.want) {
			t.Fatalf("--args %s: exit %d, stdout %q, stderr %q; want 4 and %q", tc.args, code, out, errOut, tc.want)
		}
	}
	if n := len(g.rec.executes()); n != 0 {
		t.Fatalf("a usage error reached the gateway %d times", n)
	}
	out, errOut, code := runPML(t, ws, gatewayEnv(g), "", "exec", "--args", `{"n":1}`, "return args.n")
	if a := execAnswer(t, out, errOut); code != 0 || string(a.Result) != "1" {
		t.Fatalf("next command: exit %d\n%s\n%s", code, out, errOut)
	}
}

// A run paused for an approval keeps its args when it goes on: paused in
// the package before it ran (a local tool) and before it was forwarded (a
// server-only plan).
func TestExecArgsSurviveApproval(t *testing.T) {
	g := startGateway(t, gateway.Options{})
	ws := t.TempDir()
	testfixture.WriteFile(t, ws, ".pml.json", `{"version": "1", "permissions": {"ask": ["filesystem", "math"]}}`)
	testfixture.WriteFile(t, ws, "s.txt", "xyz")
	for _, tc := range []struct {
		name, code, result string
		local              bool
	}{
		{"local", `return (await mcp.filesystem.read_file({path: args.s})).length + args.n`, "4", true},
		{"forwarded", `return await mcp.math.add({a: args.n, b: 1})`, "2", false},
	} {
		out, errOut, code := runPML(t, ws, gatewayEnv(g), "", "exec", "--approve", "--args", `{"s":"s.txt","n":1}`, tc.code)
		a := execAnswer(t, out, errOut)
		if code != 0 || !strings.Contains(errOut, "pml: approved for this run: ") || string(a.Result) != tc.result ||
			a.ExecutedLocally == nil || *a.ExecutedLocally != tc.local {
			t.Fatalf("%s: exit %d, want %s\n%s\n%s", tc.name, code, tc.result, out, errOut)
		}
	}
}
