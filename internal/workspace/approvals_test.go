package workspace

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/gatewayclient"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/testfixture"
	"github.com/pml-go/pml/internal/upstream"
	"github.com/pml-go/pml/internal/wire"
)

// approvalEnv is a package in a temp workspace on an in-process gateway.
type approvalEnv struct {
	t   *testing.T
	ws  string
	bin string // fixture MCP server
	pkg *Workspace
	svc *gateway.Service // the in-process gateway of the last open
	now time.Time
	mu  sync.Mutex
}

// newApprovalEnv writes .pml.json (pmlJSON with %[1]s = fixture binary) and
// opens a package whose in-process gateway has catalog servers.
func newApprovalEnv(t *testing.T, pmlJSON string, catalog map[string]gateway.ServerEntry) *approvalEnv {
	t.Helper()
	e := &approvalEnv{t: t, ws: t.TempDir(), bin: testfixture.BuildServer(t), now: time.Now()}
	if strings.Contains(pmlJSON, "%[1]s") {
		pmlJSON = fmt.Sprintf(pmlJSON, e.bin)
	}
	if pmlJSON != "" {
		if err := os.WriteFile(filepath.Join(e.ws, ConfigFile), []byte(pmlJSON), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e.pkg = e.open(catalog)
	return e
}

func (e *approvalEnv) open(catalog map[string]gateway.ServerEntry) *Workspace {
	e.t.Helper()
	svc, closer, err := gateway.Open(context.Background(), gateway.Options{DB: filepath.Join(e.t.TempDir(), "g.db"), Config: gateway.FileConfig{Servers: catalog}})
	if err != nil {
		e.t.Fatal(err)
	}
	e.svc = svc
	pkg, err := New(Options{Workspace: e.ws, Gateway: &gatewayclient.InProcess{Service: svc, Closer: closer.Close}, Now: e.clock})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = pkg.Close() })
	return pkg
}

func (e *approvalEnv) clock() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.now
}

func (e *approvalEnv) advance(d time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.now = e.now.Add(d)
}

// integrityRound runs code, which must pause for an integrity approval
// naming entry, and answers it: a rejection must end INTEGRITY_ERROR
// (approved false); an approval's answer is the caller's to check.
func (e *approvalEnv) integrityRound(code, entry string, approve bool) (r wire.Answer, approved bool) {
	e.t.Helper()
	a := e.exec(code)
	wantStatus(e.t, a, wire.StatusApprovalRequired)
	if a.ApprovalType != "integrity" || !strings.Contains(a.Description, entry) {
		e.t.Fatalf("%+v", a)
	}
	r = e.cont(a.WorkflowID, approve)
	if !approve && r.ErrorCode != pmlerr.IntegrityError {
		e.t.Fatalf("reject: %+v", r)
	}
	return r, approve
}

func (e *approvalEnv) exec(code string) wire.Answer {
	return e.pkg.Execute(context.Background(), wire.ExecuteRequest{Code: code})
}

func (e *approvalEnv) cont(id string, approved bool) wire.Answer {
	return e.pkg.Execute(context.Background(), wire.ExecuteRequest{ContinueWorkflow: &wire.ContinueWorkflow{WorkflowID: id, Approved: wire.Bool(approved)}})
}

// counted returns how many times the fixture count tool wrote file.
func counted(t *testing.T, file string) int {
	t.Helper()
	data, err := os.ReadFile(file)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(data), "\n")
}

func wantStatus(t *testing.T, a wire.Answer, s wire.Status) {
	t.Helper()
	if a.Status != s {
		t.Fatalf("want %s, got %s %s: %s %s", s, a.Status, a.ErrorCode, a.Error, a.Description)
	}
}

func items(t *testing.T, a wire.Answer) []map[string]any {
	t.Helper()
	b, _ := json.Marshal(a.Context["items"])
	var out []map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

const fixtureServer = `{"permissions": %s, "mcpServers": {"fx": {"command": "%%[1]s"}}}`

func TestAskApproveAndAbort(t *testing.T) {
	e := newApprovalEnv(t, fmt.Sprintf(fixtureServer, `{"allow":["json"], "ask":["fx"]}`), nil)
	file := filepath.Join(e.ws, "count.txt")
	code := fmt.Sprintf(`return await mcp.fx.count({file: %q})`, file)

	a := e.exec(code)
	wantStatus(t, a, wire.StatusApprovalRequired)
	if a.ApprovalType != "tool_permission" || !strings.Contains(a.Description, "fx:count") || strings.Join(a.Options, ",") != "continue,always,abort" {
		t.Fatalf("approval: %+v", a)
	}
	// continue(false) aborts and nothing ran.
	ab := e.cont(a.WorkflowID, false)
	wantStatus(t, ab, wire.StatusAborted)
	if counted(t, file) != 0 {
		t.Fatal("an aborted workflow ran its tool")
	}
	// The id is spent.
	if r := e.cont(a.WorkflowID, true); r.ErrorCode != pmlerr.WorkflowNotFound {
		t.Fatalf("reused id: %+v", r)
	}
	// ask → continue(true) executes; the approval covers that execution only.
	a = e.exec(code)
	wantStatus(t, a, wire.StatusApprovalRequired)
	ok := e.cont(a.WorkflowID, true)
	wantStatus(t, ok, wire.StatusSuccess)
	if string(ok.Result) != "1" || counted(t, file) != 1 {
		t.Fatalf("result %s, count %d", ok.Result, counted(t, file))
	}
	wantStatus(t, e.exec(code), wire.StatusApprovalRequired)
	if counted(t, file) != 1 {
		t.Fatal("a second execution ran on the first one's approval")
	}
}

func TestDeniedToolBlocksBeforeAnythingRuns(t *testing.T) {
	e := newApprovalEnv(t, fmt.Sprintf(fixtureServer, `{"allow":["fx:count"], "deny":["fx:echo"]}`), nil)
	file := filepath.Join(e.ws, "count.txt")
	a := e.exec(fmt.Sprintf(`await mcp.fx.count({file: %q}); return await mcp.fx.echo({text: "x"})`, file))
	if a.ErrorCode != pmlerr.PermissionDenied || !strings.Contains(a.Error, "fx:echo") {
		t.Fatalf("%+v", a)
	}
	if counted(t, file) != 0 {
		t.Fatal("a plan with a denied tool ran something")
	}
	// Deny beats allow, also for a call the static plan could not see.
	a = e.exec(`const n = ["ec", "ho"].join(""); try { await mcp.fx[n]({text: "x"}) } catch (err) { return err.code }`)
	if a.Status != wire.StatusSuccess || string(a.Result) != `"PERMISSION_DENIED"` {
		t.Fatalf("dynamic deny: %+v", a)
	}
	wantStatus(t, e.exec(fmt.Sprintf(`return await mcp.fx.count({file: %q})`, file)), wire.StatusSuccess)
}

func TestOneApprovalForTheWholePlan(t *testing.T) {
	catalog := map[string]gateway.ServerEntry{"dep": {ServerConfig: upstream.ServerConfig{Command: "__BIN__", Env: map[string]string{"DEP_TOKEN": "${DEP_TOKEN}"}}}}
	e := newApprovalEnv(t, `{"permissions": {"ask": ["fx", "dep"]}, "mcpServers": {"fx": {"command": "%[1]s", "env": {"T": "${FX_TOKEN}"}}}}`, nil)
	catalog["dep"] = gateway.ServerEntry{ServerConfig: upstream.ServerConfig{Command: e.bin, Env: map[string]string{"DEP_TOKEN": "${DEP_TOKEN}"}}}
	e.pkg = e.open(catalog)
	a := e.exec(`await mcp.fx.echo({text: "a"}); return await mcp.dep.echo({text: "b"})`)
	wantStatus(t, a, wire.StatusApprovalRequired)
	got := map[string]int{}
	for _, it := range items(t, a) {
		got[it["type"].(string)]++
		if it["description"] == "" {
			t.Fatalf("item without description: %v", it)
		}
	}
	want := map[string]int{"tool_permission": 2, "dependency": 1, "api_key_required": 2}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("items %v, want %v", got, want)
		}
	}
	if a.ApprovalType != "dependency" {
		t.Fatalf("approval_type %s", a.ApprovalType)
	}
}

func TestAPIKeyFlowReloadsDotEnv(t *testing.T) {
	e := newApprovalEnv(t, `{"permissions": {"allow": ["fx"]}, "mcpServers": {"fx": {"command": "%[1]s", "env": {"SECRET_FOR_TEST": "${FX_TEST_TOKEN}"}}}}`, nil)
	code := `return await mcp.fx.env({name: "SECRET_FOR_TEST"})`
	a := e.exec(code)
	wantStatus(t, a, wire.StatusApprovalRequired)
	if a.ApprovalType != "api_key_required" || !strings.Contains(a.Description, "FX_TEST_TOKEN") || !strings.Contains(a.Description, ".env") {
		t.Fatalf("%+v", a)
	}
	// The user writes .env between the two calls.
	if err := os.WriteFile(filepath.Join(e.ws, ".env"), []byte("FX_TEST_TOKEN=s3cr3t-value\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ok := e.cont(a.WorkflowID, true)
	wantStatus(t, ok, wire.StatusSuccess)
	// The server got the key; the AI client sees it masked, as every .env value.
	if string(ok.Result) != `"[REDACTED]"` {
		t.Fatalf("result %s", ok.Result)
	}
}

func TestDependencyInstall(t *testing.T) {
	e := newApprovalEnv(t, `{"permissions": {"allow": ["auto"], "ask": ["manual"]}}`, nil)
	e.pkg = e.open(map[string]gateway.ServerEntry{
		"auto":   {ServerConfig: upstream.ServerConfig{Command: e.bin}},
		"manual": {ServerConfig: upstream.ServerConfig{Command: e.bin}},
		"gone":   {ServerConfig: upstream.ServerConfig{Command: "/nonexistent/mcp-server"}},
	})
	// Even an allow-listed dependency asks before it is installed: allowing
	// a tool's calls is no consent to install software.
	a := e.exec(`return await mcp.auto.echo({text: "hi"})`)
	wantStatus(t, a, wire.StatusApprovalRequired)
	if a.ApprovalType != "dependency" || !strings.Contains(a.Description, "auto") {
		t.Fatalf("%+v", a)
	}
	if _, err := os.Stat(filepath.Join(e.ws, StateDir, "deps.json")); !os.IsNotExist(err) {
		t.Fatalf("installed before the approval: %v", err)
	}
	wantStatus(t, e.cont(a.WorkflowID, true), wire.StatusSuccess)
	deps, err := os.ReadFile(filepath.Join(e.ws, StateDir, "deps.json"))
	if err != nil || !strings.Contains(string(deps), `"auto"`) {
		t.Fatalf("deps.json: %v %s", err, deps)
	}
	// Later calls skip the install (deps.json unchanged) and the lockfile has the entry.
	wantStatus(t, e.exec(`return await mcp.auto.echo({text: "again"})`), wire.StatusSuccess)
	deps2, _ := os.ReadFile(filepath.Join(e.ws, StateDir, "deps.json"))
	if string(deps2) != string(deps) {
		t.Fatal("second call reinstalled")
	}
	lock, err := os.ReadFile(filepath.Join(e.ws, StateDir, "mcp.lock"))
	if err != nil || !strings.Contains(string(lock), "pml.mcp.auto.server.") {
		t.Fatalf("lockfile: %v %s", err, lock)
	}
	// A dependency not on the allow list asks first, and its approval installs it.
	a = e.exec(`return await mcp.manual.echo({text: "m"})`)
	wantStatus(t, a, wire.StatusApprovalRequired)
	if a.ApprovalType != "dependency" || !strings.Contains(a.Description, "manual") {
		t.Fatalf("%+v", a)
	}
	wantStatus(t, e.cont(a.WorkflowID, true), wire.StatusSuccess)
	// A dependency whose command does not exist is a clear error; the package serves on.
	a = e.exec(`return await mcp.gone.echo({text: "x"})`)
	wantStatus(t, a, wire.StatusApprovalRequired)
	if r := e.cont(a.WorkflowID, true); r.ErrorCode != pmlerr.ToolError || !strings.Contains(r.Error, "PATH") {
		t.Fatalf("%+v", r)
	}
	wantStatus(t, e.exec(`return await mcp.auto.echo({text: "still"})`), wire.StatusSuccess)

	// Once the permissions deny a server, its lockfile entry goes on load;
	// the others stay.
	if err := os.WriteFile(filepath.Join(e.ws, ConfigFile), []byte(`{"permissions": {"allow": ["manual"], "deny": ["auto"]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.pkg.refreshConfig(); err != nil {
		t.Fatal(err)
	}
	lf, err := e.pkg.lockfile()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := lf.Get("pml.mcp.auto.server"); ok {
		t.Fatal("denied server kept in the lockfile")
	}
	if _, ok := lf.Get("pml.mcp.manual.server"); !ok {
		t.Fatal("allowed server dropped from the lockfile")
	}
}

func TestIntegrityApproveAndReject(t *testing.T) {
	e := newApprovalEnv(t, `{"permissions": {"allow": ["dep"]}}`, nil)
	entry := func(arg string) map[string]gateway.ServerEntry {
		return map[string]gateway.ServerEntry{"dep": {ServerConfig: upstream.ServerConfig{Command: e.bin, Args: []string{arg}}}}
	}
	e.pkg = e.open(entry("-page-size=100"))
	code := `return await mcp.dep.echo({text: "v"})`
	first := e.exec(code)
	if first.ApprovalType != "dependency" {
		t.Fatalf("%+v", first)
	}
	wantStatus(t, e.cont(first.WorkflowID, true), wire.StatusSuccess)
	// The gateway's metadata changes (a simulated MITM): the package notices.
	for _, approve := range []bool{false, true} {
		e.pkg = e.open(entry(fmt.Sprintf("-page-size=%d", 7+len(fmt.Sprint(approve)))))
		r, approved := e.integrityRound(code, "pml.mcp.dep.server", approve)
		if !approved {
			continue
		}
		wantStatus(t, r, wire.StatusSuccess)
		wantStatus(t, e.exec(code), wire.StatusSuccess) // the lockfile was updated
	}
}

// The no-double-run test: a side-effecting tool counts exactly one invocation
// per logical call across any number of mid-run pauses.
func TestPausesNeverRunAToolTwice(t *testing.T) {
	e := newApprovalEnv(t, fmt.Sprintf(fixtureServer, `{"allow":["fx:count"], "ask":["fx:echo", "fx:json"]}`), nil)
	file := filepath.Join(e.ws, "count.txt")
	code := fmt.Sprintf(`
		const f = %q;
		const a = await mcp.fx.count({file: f});
		const echo = ["ec", "ho"].join("");
		const b = await mcp.fx[echo]({text: "hi"});
		const [c, d] = await Promise.all([mcp.fx.count({file: f}), mcp.fx.count({file: f})]);
		const js = ["js", "on"].join("");
		const j = await mcp.fx[js]({});
		const e = await mcp.fx.count({file: f});
		return [a, b, c + d, typeof j, e];`, file)
	a := e.exec(code)
	pauses, id := 0, a.WorkflowID
	for a.Status == wire.StatusApprovalRequired {
		pauses++
		a = e.pkg.Execute(context.Background(), wire.ExecuteRequest{Code: code, ContinueWorkflow: &wire.ContinueWorkflow{WorkflowID: a.WorkflowID, Approved: wire.Bool(true)}})
		// One id for the whole run, across its pauses.
		if a.WorkflowID != id {
			t.Fatalf("workflow id %q after pause %d, %q before", a.WorkflowID, pauses, id)
		}
	}
	wantStatus(t, a, wire.StatusSuccess)
	if pauses != 2 {
		t.Fatalf("pauses %d", pauses)
	}
	if string(a.Result) != `[1,"hi",5,"object",4]` || counted(t, file) != 4 {
		t.Fatalf("result %s, count file %d lines", a.Result, counted(t, file))
	}
}

func TestTwoPendingWorkflowsAndTTL(t *testing.T) {
	e := newApprovalEnv(t, fmt.Sprintf(fixtureServer, `{"ask":["fx"]}`), nil)
	a1 := e.exec(`return await mcp.fx.echo({text: "one"})`)
	a2 := e.exec(`return await mcp.fx.echo({text: "two"})`)
	wantStatus(t, a1, wire.StatusApprovalRequired)
	wantStatus(t, a2, wire.StatusApprovalRequired)
	if a1.WorkflowID == a2.WorkflowID {
		t.Fatal("same workflow id")
	}
	r2 := e.cont(a2.WorkflowID, true)
	r1 := e.cont(a1.WorkflowID, true)
	if string(r1.Result) != `"one"` || string(r2.Result) != `"two"` {
		t.Fatalf("%s %s", r1.Result, r2.Result)
	}
	// TTL: 5 minutes with the injected clock.
	a3 := e.exec(`return await mcp.fx.pid({})`)
	wantStatus(t, a3, wire.StatusApprovalRequired)
	e.advance(6 * time.Minute)
	if r := e.cont(a3.WorkflowID, true); r.ErrorCode != pmlerr.WorkflowNotFound {
		t.Fatalf("expired workflow: %+v", r)
	}
	// An unknown id is never forwarded and never a silent null.
	if r := e.cont("no-such-workflow", true); r.ErrorCode != pmlerr.WorkflowNotFound {
		t.Fatalf("%+v", r)
	}
}

func TestWorkflowBoundToItsCode(t *testing.T) {
	e := newApprovalEnv(t, fmt.Sprintf(fixtureServer, `{"ask":["fx"]}`), nil)
	a := e.exec(`return await mcp.fx.echo({text: "approved code"})`)
	wantStatus(t, a, wire.StatusApprovalRequired)
	r := e.pkg.Execute(context.Background(), wire.ExecuteRequest{Code: `return await mcp.fx.echo({text: "other code"})`,
		ContinueWorkflow: &wire.ContinueWorkflow{WorkflowID: a.WorkflowID, Approved: wire.Bool(true)}})
	if r.ErrorCode != pmlerr.InvalidRequest {
		t.Fatalf("%+v", r)
	}
}

func TestExecuteApprovingApprovesEverything(t *testing.T) {
	e := newApprovalEnv(t, fmt.Sprintf(fixtureServer, `{"ask":["fx"]}`), nil)
	var seen []string
	a := e.pkg.ExecuteApproving(context.Background(), wire.ExecuteRequest{Code: `return await mcp.fx.echo({text: "auto"})`}, func(approved []string) { seen = append(seen, approved...) })
	wantStatus(t, a, wire.StatusSuccess)
	if len(seen) != 1 || !strings.HasPrefix(seen[0], "approved for this run: fx:echo (to stop asking, add it to permissions.allow in ") {
		t.Fatalf("reported %v", seen)
	}
}

// A server-only plan that asks first keeps the id of its approval through
// the gateway's run: the AI client follows one execution.
func TestForwardedRunKeepsItsWorkflowID(t *testing.T) {
	e := newApprovalEnv(t, `{"permissions": {"ask": ["json"]}}`, nil)
	a := e.exec(`return await mcp.json.parse({data: "[1]"})`)
	wantStatus(t, a, wire.StatusApprovalRequired)
	done := e.cont(a.WorkflowID, true)
	wantStatus(t, done, wire.StatusSuccess)
	if done.WorkflowID != a.WorkflowID || string(done.Result) != "[1]" {
		t.Fatalf("final answer %+v, asked under %q", done, a.WorkflowID)
	}
}
