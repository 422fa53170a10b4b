package e2e

import (
	"strings"
	"testing"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/testfixture"
)

// A namespace nobody serves is UNKNOWN_TOOL before any approval, even with
// --approve and the namespace on the ask list; with the gateway unreachable
// the package refuses nothing new (the offline path's NETWORK_ERROR), and
// once the gateway is back the next command works.
func TestExecUnknownNamespace(t *testing.T) {
	g := startGateway(t, gateway.Options{})
	dead := startGateway(t, gateway.Options{})
	dead.kill()
	ws := t.TempDir()
	testfixture.WriteFile(t, ws, ".pml.json", `{"version": "1", "permissions": {"ask": ["nosuch", "math"]}}`)
	out, errOut, code := runPML(t, ws, gatewayEnv(g), "", "exec", "--approve", "return await mcp.nosuch.thing({})")
	if a := execAnswer(t, out, errOut); code != 1 || a.ErrorCode != "UNKNOWN_TOOL" || strings.Contains(errOut, "pml: approved") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if n := len(g.rec.executes()); n != 0 {
		t.Fatalf("the refused code reached the gateway's execute %d times", n)
	}
	out, errOut, code = runPML(t, ws, gatewayEnv(dead), "", "exec", "return await mcp.nosuch.thing({})")
	if a := execAnswer(t, out, errOut); code == 0 || a.ErrorCode == "UNKNOWN_TOOL" {
		t.Fatalf("offline: refused as unknown\n%s\n%s", out, errOut)
	}
	out, errOut, code = runPML(t, ws, gatewayEnv(g), "", "exec", "--approve", "return await mcp.math.add({a: 1, b: 2})")
	if a := execAnswer(t, out, errOut); code != 0 || string(a.Result) != "3" || !strings.Contains(errOut, "pml: approved for this run: math:add") {
		t.Fatalf("next command: exit %d\n%s\n%s", code, out, errOut)
	}
}
