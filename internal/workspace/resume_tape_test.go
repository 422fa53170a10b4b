package workspace

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/approval"
	"github.com/pml-go/pml/internal/pmlerr"
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

// afterParkedRunEnds stands for a person who answers after the paused
// run's deadline: it waits until the run parked under a's workflow ended,
// so that approving it must run the code again from its journal.
func afterParkedRunEnds(t *testing.T, e *approvalEnv, a wire.Answer) {
	t.Helper()
	wf, err := e.pkg.workflows.Take(a.WorkflowID)
	if err != nil || wf.Run.parked == nil {
		t.Fatalf("no parked run under %s: %v", a.WorkflowID, err)
	}
	select {
	case <-wf.Run.parked.done:
	case <-time.After(30 * time.Second):
		t.Fatal("the parked run outlived its deadline")
	}
	// Its answer, which nobody waited for, is its deadline.
	if ev := <-wf.Run.parked.events; ev.answer.ErrorCode != pmlerr.ExecutionTimeout {
		t.Fatalf("a run that ended while parked answered %+v", ev)
	}
	e.pkg.workflows.Create(wf)
}

// Code whose call arguments come from the clock and Math.random resumes
// after a pause at a call only seen at run time, across two pauses, and the
// write happens once: the run waits, parked, in the paused call and goes on
// from there. When the run ended before the answer came (its deadline
// passed), the re-run reads the same time and randomness from the journal,
// so the write is answered from the journal and still happens once.
func TestResumeWithTimeAndRandomness(t *testing.T) {
	for _, late := range []bool{false, true} {
		t.Run(fmt.Sprintf("answered after the run ended=%v", late), func(t *testing.T) { resumeWithTimeAndRandomness(t, late) })
	}
}

func resumeWithTimeAndRandomness(t *testing.T, late bool) {
	e := newApprovalEnv(t, fmt.Sprintf(fixtureServer, `{"allow":["filesystem"], "ask":["fx:echo", "fx:json"]}`), nil)
	code := `
		const ns = ["f", "x"].join("");
		await mcp.filesystem.write_file({path: "runs/" + Date.now() + "-" + Math.random(), content: "1"});
		const echoed = await mcp[ns].echo({text: "at " + new Date().toISOString().length});
		await mcp.filesystem.write_file({path: "runs/" + Date() .length + "-" + Math.random(), content: "1"});
		await mcp[ns].json({});
		return echoed;`
	var opts *wire.ExecuteOptions
	if late {
		opts = &wire.ExecuteOptions{TimeoutMS: 1500}
	}
	a := e.pkg.Execute(context.Background(), wire.ExecuteRequest{Code: code, Options: opts})
	pauses := 0
	for a.Status == wire.StatusApprovalRequired {
		pauses++
		if late {
			afterParkedRunEnds(t, e, a)
		}
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
// still refuses to resume once its parked run ended, and nothing runs twice.
func TestResumeStillRefusesDivergingCode(t *testing.T) {
	e := newApprovalEnv(t, fmt.Sprintf(fixtureServer, `{"allow":["filesystem"], "ask":["fx:echo"]}`), nil)
	code := `
		const ns = ["f", "x"].join("");
		for (let i = 0; i < 70000; i++) Math.random();
		await mcp.filesystem.write_file({path: "runs/" + Math.random(), content: "1"});
		return await mcp[ns].echo({text: "hi"});`
	// 70,000 draws under the race detector, beside the rest of the suite,
	// took more than 1.5 s of JS time on a loaded machine: the deadline the
	// parked run ends at leaves room for them.
	a := e.pkg.Execute(context.Background(), wire.ExecuteRequest{Code: code, Options: &wire.ExecuteOptions{TimeoutMS: 5000}})
	wantStatus(t, a, wire.StatusApprovalRequired)
	afterParkedRunEnds(t, e, a)
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
