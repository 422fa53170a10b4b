package workspace

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/testfixture"
	"github.com/pml-go/pml/internal/wire"
)

// openLocal opens the package in local mode (in-process gateway) on a
// workspace whose .pml.json is pmlJSON.
func openLocal(t *testing.T, pmlJSON string) (*Workspace, string) {
	t.Helper()
	ws := t.TempDir()
	testfixture.WriteFile(t, ws, ConfigFile, pmlJSON)
	t.Setenv("PML_CLOUD_URL", "")
	t.Setenv("PML_WORKSPACE", ws)
	p, err := Open(context.Background(), ws, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p, ws
}

type lookupCounts struct{ config, analyses, rules int64 }

func (p *Workspace) lookupCounts() lookupCounts {
	return lookupCounts{p.lookups.config.Load(), p.lookups.analyses.Load(), p.lookups.rules.Load()}
}

func (c lookupCounts) minus(o lookupCounts) lookupCounts {
	return lookupCounts{c.config - o.config, c.analyses - o.analyses, c.rules - o.rules}
}

// execCounting runs req and returns its answer and the lookups it cost.
func execCounting(t *testing.T, p *Workspace, req wire.ExecuteRequest) (wire.Answer, lookupCounts) {
	t.Helper()
	before := p.lookupCounts()
	a := p.Execute(context.Background(), req)
	return a, p.lookupCounts().minus(before)
}

// One execute reads the configuration, analyses its code and asks for the
// routing rules once, however many calls its code makes; the in-process
// gateway it forwards to finds the package's analysis in the shared cache.
func TestExecuteBuildsOnePlan(t *testing.T) {
	p, ws := openLocal(t, `{"permissions": {"allow": ["filesystem:read_file"]}}`)
	testfixture.WriteFile(t, ws, "a.txt", "hello")
	code := `const a = await mcp.filesystem.read_file({path: "a.txt"});
		const b = await mcp.filesystem.read_file({path: "a.txt"});
		return a + b`
	cached := p.analyzer.Len()
	a, got := execCounting(t, p, wire.ExecuteRequest{Code: code})
	if a.Status != wire.StatusSuccess || string(a.Result) != `"hellohello"` {
		t.Fatalf("%+v", a)
	}
	if want := (lookupCounts{1, 1, 1}); got != want {
		t.Errorf("one execute cost %+v lookups (config, analyses, rules), want %+v", got, want)
	}
	if n := p.analyzer.Len() - cached; n != 1 {
		t.Errorf("one execute added %d analyses to the cache, want 1 (package and gateway share it)", n)
	}

	// The gateway analyses with the package's analyser: code only it saw
	// lands in the package's cache.
	cached = p.analyzer.Len()
	if _, err := p.gw.Execute(context.Background(), wire.ExecuteRequest{Code: `return 41 + 1`}); err != nil {
		t.Fatal(err)
	}
	if n := p.analyzer.Len() - cached; n != 1 {
		t.Errorf("the in-process gateway's analysis added %d entries to the package's cache, want 1", n)
	}
}

// A paused execute and its continue each build one plan; the continue
// reuses the analysis it paused with and reads the configuration again only
// when an approved item changed it.
func TestPauseAndContinueBuildOnePlanEach(t *testing.T) {
	p, _ := openLocal(t, `{"permissions": {"allow": ["filesystem:read_file"], "ask": ["filesystem:write_file"]}}`)
	code := `await mcp.filesystem.write_file({path: "b.txt", content: "x"});
		return await mcp.filesystem.read_file({path: "b.txt"})`
	a, got := execCounting(t, p, wire.ExecuteRequest{Code: code})
	if a.Status != wire.StatusApprovalRequired {
		t.Fatalf("%+v", a)
	}
	if want := (lookupCounts{1, 1, 1}); got != want {
		t.Errorf("the pausing execute cost %+v lookups, want %+v", got, want)
	}
	a, got = execCounting(t, p, wire.ExecuteRequest{ContinueWorkflow: &wire.ContinueWorkflow{WorkflowID: a.WorkflowID, Approved: wire.Bool(true)}})
	if a.Status != wire.StatusSuccess || string(a.Result) != `"x"` {
		t.Fatalf("%+v", a)
	}
	if want := (lookupCounts{1, 0, 1}); got != want {
		t.Errorf("the continue cost %+v lookups, want %+v", got, want)
	}
}

// A continue builds its plan from the configuration as it is then: a tool
// denied while the run was paused stays denied, whatever was approved, and
// the package serves the next execute.
func TestContinueReadsTheConfigurationAgain(t *testing.T) {
	p, ws := openLocal(t, `{"permissions": {"allow": ["filesystem:read_file"], "ask": ["filesystem:write_file"]}}`)
	code := `return await mcp.filesystem.write_file({path: "c.txt", content: "x"})`
	a := p.Execute(context.Background(), wire.ExecuteRequest{Code: code})
	if a.Status != wire.StatusApprovalRequired {
		t.Fatalf("%+v", a)
	}
	testfixture.WriteFile(t, ws, ConfigFile, `{"permissions": {"allow": ["filesystem:read_file"], "deny": ["filesystem:write_file"]}}`)
	a = p.Execute(context.Background(), wire.ExecuteRequest{ContinueWorkflow: &wire.ContinueWorkflow{WorkflowID: a.WorkflowID, Approved: wire.Bool(true)}})
	if a.Status != wire.StatusError || a.ErrorCode != pmlerr.PermissionDenied {
		t.Fatalf("continue after a deny: %+v", a)
	}
	if _, err := os.Stat(filepath.Join(ws, "c.txt")); !os.IsNotExist(err) {
		t.Fatalf("the denied write ran: %v", err)
	}
	testfixture.WriteFile(t, ws, "d.txt", "next")
	if a := p.Execute(context.Background(), wire.ExecuteRequest{Code: `return await mcp.filesystem.read_file({path: "d.txt"})`}); a.Status != wire.StatusSuccess {
		t.Fatalf("next execute: %+v", a)
	}
}

// The permission rules are checked against the known tools when the
// configuration is new, not on every execute: an execute with .pml.json
// unchanged does not even build the comparison key, and one after an edit
// does.
func TestPermissionsCheckedOncePerConfiguration(t *testing.T) {
	p, ws := openLocal(t, `{"permissions": {"allow": ["filesystem:read_file"]}}`)
	run := func() int64 {
		t.Helper()
		before := p.lookups.permKeys.Load()
		if a := p.Execute(context.Background(), wire.ExecuteRequest{Code: `return 1`}); a.Status != wire.StatusSuccess {
			t.Fatalf("%+v", a)
		}
		return p.lookups.permKeys.Load() - before
	}
	run()
	if n := run(); n != 0 {
		t.Errorf("an execute with the configuration unchanged compared the permissions %d times, want 0", n)
	}
	testfixture.WriteFile(t, ws, ConfigFile, `{"permissions": {"allow": ["filesystem:read_file", "filesystem:write_file"]}}`)
	p.invalidateLocal() // a write within the file's timestamp granularity
	if n := run(); n != 1 {
		t.Errorf("an execute after an edit of .pml.json compared the permissions %d times, want 1", n)
	}
}

// Whether an execution's code holds a secret is asked before the gateway
// round trip and again before the answer: the rules run once for both, and
// not at all for code sent again, until the secret values change.
func TestSecretCheckOncePerCode(t *testing.T) {
	p, ws := openLocal(t, `{"permissions": {"allow": ["filesystem:read_file"]}}`)
	checks := func(code string) int64 {
		t.Helper()
		before := p.lookups.secretChecks.Load()
		if a := p.Execute(context.Background(), wire.ExecuteRequest{Code: code}); a.Status != wire.StatusSuccess {
			t.Fatalf("%+v", a)
		}
		return p.lookups.secretChecks.Load() - before
	}
	const code = `return "first-value-7f3a9c2e".length`
	if n := checks(code); n != 1 {
		t.Errorf("an execute ran the secret rules %d times, want 1", n)
	}
	if n := checks(code); n != 0 {
		t.Errorf("the same code again ran the secret rules %d times, want 0", n)
	}
	testfixture.WriteFile(t, ws, ".env", "TOKEN=first-value-7f3a9c2e\n")
	if err := p.env.Reload(); err != nil {
		t.Fatal(err)
	}
	if n := checks(code); n != 1 {
		t.Errorf("after a .env edit the code was checked %d times, want 1", n)
	}
	if !p.holdsSecret(code, "") {
		t.Error("the code holds the new .env value")
	}
}
