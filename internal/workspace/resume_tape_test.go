package workspace

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/pml-go/pml/internal/approval"
	"github.com/pml-go/pml/internal/wire"
)

// runsWritten lists the files the code wrote under runs/ and checks each
// holds "1".
func runsWritten(t *testing.T, ws string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(ws, "runs"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(ws, "runs", e.Name()))
		if err != nil || string(b) != "1" {
			t.Fatalf("%s: %q %v", e.Name(), b, err)
		}
		names = append(names, e.Name())
	}
	return names
}

func approve(e *approvalEnv, code string, a wire.Answer) wire.Answer {
	return e.pkg.Execute(context.Background(), wire.ExecuteRequest{Code: code, ContinueWorkflow: &wire.ContinueWorkflow{WorkflowID: a.WorkflowID, Approved: wire.Bool(true)}})
}

// Code whose call arguments come from the clock and Math.random resumes
// after a pause at a call only seen at run time: the re-run reads the same
// time and randomness, so the write is answered from the journal and
// happens once, across two pauses.
func TestResumeWithTimeAndRandomness(t *testing.T) {
	e := newApprovalEnv(t, fmt.Sprintf(fixtureServer, `{"allow":["filesystem"], "ask":["fx:echo", "fx:json"]}`), nil)
	code := `
		const ns = ["f", "x"].join("");
		await mcp.filesystem.write_file({path: "runs/" + Date.now() + "-" + Math.random(), content: "1"});
		const echoed = await mcp[ns].echo({text: "at " + new Date().toISOString().length});
		await mcp.filesystem.write_file({path: "runs/" + Date() .length + "-" + Math.random(), content: "1"});
		await mcp[ns].json({});
		return echoed;`
	a := e.exec(code)
	pauses := 0
	for a.Status == wire.StatusApprovalRequired {
		pauses++
		a = approve(e, code, a)
	}
	wantStatus(t, a, wire.StatusSuccess)
	if pauses != 2 || string(a.Result) != `"at 24"` {
		t.Fatalf("pauses %d, result %s", pauses, a.Result)
	}
	if got := runsWritten(t, e.ws); len(got) != 2 {
		t.Fatalf("wrote %v, want two files, each once", got)
	}
	// The next execution starts afresh: new time and randomness.
	wantStatus(t, e.exec(`await mcp.filesystem.write_file({path: "runs/" + Math.random(), content: "1"}); return 1`), wire.StatusSuccess)
	if got := runsWritten(t, e.ws); len(got) != 3 {
		t.Fatalf("wrote %v", got)
	}
}

// Code whose arguments differ on the re-run for a reason the tape does not
// cover (here a random value read past the values it keeps per source)
// still refuses to resume, and nothing runs twice.
func TestResumeStillRefusesDivergingCode(t *testing.T) {
	e := newApprovalEnv(t, fmt.Sprintf(fixtureServer, `{"allow":["filesystem"], "ask":["fx:echo"]}`), nil)
	code := `
		const ns = ["f", "x"].join("");
		for (let i = 0; i < 70000; i++) Math.random();
		await mcp.filesystem.write_file({path: "runs/" + Math.random(), content: "1"});
		return await mcp[ns].echo({text: "hi"});`
	a := e.exec(code)
	wantStatus(t, a, wire.StatusApprovalRequired)
	a = approve(e, code, a)
	wantStatus(t, a, wire.StatusError)
	if a.ErrorCode != approval.JournalDiverged {
		t.Fatalf("got %s: %s", a.ErrorCode, a.Error)
	}
	if got := runsWritten(t, e.ws); len(got) != 1 {
		t.Fatalf("wrote %v", got)
	}
	wantStatus(t, e.exec(`return await mcp.fx.echo({text: "next"})`), wire.StatusApprovalRequired)
}
