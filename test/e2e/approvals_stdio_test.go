package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/testfixture"
	"github.com/pml-go/pml/internal/wire"
)

// The HIL scenarios through the real `pml stdio` (local mode), as an AI
// client sees them.
func TestHILThroughStdio(t *testing.T) {
	bin := testfixture.BuildServer(t)
	ws := t.TempDir()
	testfixture.WriteFile(t, ws, ".pml.json", fmt.Sprintf(`{"permissions": {"allow": ["fx:count", "json"], "ask": ["fx:echo"], "deny": ["fx:crash"]},
		"mcpServers": {"fx": {"command": %q}}}`, bin))
	p := startStdio(t, ws, nil)
	file := filepath.Join(ws, "count.txt")

	// ask -> approval_required; continue(false) aborts and nothing ran.
	code := fmt.Sprintf(`await mcp.fx.count({file: %q}); return await mcp.fx.echo({text: "ok"})`, file)
	a := p.execute(t, code)
	stdioStatus(t, a, wire.StatusApprovalRequired)
	ab := p.executeReq(t, wire.ExecuteRequest{ContinueWorkflow: &wire.ContinueWorkflow{WorkflowID: a.WorkflowID, Approved: wire.Bool(false)}})
	stdioStatus(t, ab, wire.StatusAborted)
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Fatal("aborted run touched the counter")
	}
	// continue(true) executes.
	a = p.execute(t, code)
	ok := p.executeReq(t, wire.ExecuteRequest{ContinueWorkflow: &wire.ContinueWorkflow{WorkflowID: a.WorkflowID, Approved: wire.Bool(true)}})
	stdioStatus(t, ok, wire.StatusSuccess)
	if string(ok.Result) != `"ok"` || countedLines(t, file) != 1 {
		t.Fatalf("%s, count %d", ok.Result, countedLines(t, file))
	}
	// A deny-listed tool is blocked.
	if d := p.execute(t, `return await mcp.fx.crash({})`); d.ErrorCode != pmlerr.PermissionDenied {
		t.Fatalf("%+v", d)
	}
	// A garbled continue_workflow gets a clear error and the session goes on.
	for _, args := range []map[string]any{
		{"continue_workflow": map[string]any{"approved": true}},
		{"continue_workflow": map[string]any{"workflow_id": 7, "approved": "yes"}},
	} {
		res, err := p.session.CallTool(context.Background(), &mcp.CallToolParams{Name: "execute", Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		if g := gatewaytest.DecodeAnswer(t, res); g.ErrorCode != pmlerr.InvalidRequest {
			t.Fatalf("garbled %v: %+v", args, g)
		}
	}
	if r := p.executeReq(t, wire.ExecuteRequest{ContinueWorkflow: &wire.ContinueWorkflow{WorkflowID: "unknown", Approved: wire.Bool(true)}}); r.ErrorCode != pmlerr.WorkflowNotFound {
		t.Fatalf("%+v", r)
	}
	stdioStatus(t, p.execute(t, `return await mcp.json.parse({data: "[1]"})`), wire.StatusSuccess)
}

func stdioStatus(t *testing.T, a wire.Answer, s wire.Status) {
	t.Helper()
	if a.Status != s {
		t.Fatalf("want %s, got %s %s: %s %s", s, a.Status, a.ErrorCode, a.Error, a.Description)
	}
}

func countedLines(t *testing.T, file string) int {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(data), "\n")
}
