package workspace

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/wire"
)

// person answers the approval forms an eliciting AI client shows, and
// keeps what it was shown.
type person struct {
	mu     sync.Mutex
	answer func(*mcp.ElicitRequest) *mcp.ElicitResult
	asked  []*mcp.ElicitParams
}

func (h *person) handle(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	h.mu.Lock()
	h.asked = append(h.asked, req.Params)
	answer := h.answer
	h.mu.Unlock()
	return answer(req), nil
}

func (h *person) times() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.asked)
}

func (h *person) last() *mcp.ElicitParams {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.asked[len(h.asked)-1]
}

func decide(choice string) func(*mcp.ElicitRequest) *mcp.ElicitResult {
	return func(*mcp.ElicitRequest) *mcp.ElicitResult {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": choice}}
	}
}

// elicitingClient connects an AI client that declares elicitation, whose
// person answers with h.
func elicitingClient(t *testing.T, p *Workspace, h *person) *mcp.ClientSession {
	return connectInMemory(t, p.NewMCPServer(), &mcp.ClientOptions{ElicitationHandler: h.handle})
}

// A client that can elicit gets the person's approval through a form: the
// execute completes in one call, with no approval_required for the AI to
// answer. The form shows the plan's tools, why each asks, and the code.
func TestElicitationApprovesInOneCall(t *testing.T) {
	e := newApprovalEnv(t, fmt.Sprintf(fixtureServer, `{"allow":["json"], "ask":["fx"]}`), nil)
	h := &person{answer: decide(wire.ChoiceApprove)}
	cs := elicitingClient(t, e.pkg, h)
	file := filepath.Join(e.ws, "count.txt")
	code := fmt.Sprintf(`await mcp.fx.count({file: %q}); return "done"`, file)

	a := callExecuteIn(t, cs, wire.ExecuteRequest{Code: code})
	wantStatus(t, a, wire.StatusSuccess)
	if counted(t, file) != 1 || h.times() != 1 {
		t.Fatalf("count %d, asked %d", counted(t, file), h.times())
	}
	msg := h.last().Message
	for _, want := range []string{"fx:count", "tool_permission", "allow list", "mcp.fx.count"} {
		if !strings.Contains(msg, want) {
			t.Fatalf("the form does not say %q:\n%s", want, msg)
		}
	}
	// Approved for that execution only: the next one asks again.
	wantStatus(t, callExecuteIn(t, cs, wire.ExecuteRequest{Code: code}), wire.StatusSuccess)
	if h.times() != 2 {
		t.Fatalf("asked %d times", h.times())
	}
}

// Declining (or dismissing) the form aborts, nothing runs, and the session
// serves the next request.
func TestElicitationDeclineRunsNothing(t *testing.T) {
	e := newApprovalEnv(t, fmt.Sprintf(fixtureServer, `{"allow":["json"], "ask":["fx"]}`), nil)
	file := filepath.Join(e.ws, "count.txt")
	code := fmt.Sprintf(`await mcp.fx.count({file: %q}); return "done"`, file)
	for _, answer := range []*mcp.ElicitResult{
		{Action: "decline"},
		{Action: "cancel"},
		{Action: "accept", Content: map[string]any{"decision": wire.ChoiceDeny}},
	} {
		h := &person{answer: func(*mcp.ElicitRequest) *mcp.ElicitResult { return answer }}
		cs := elicitingClient(t, e.pkg, h)
		a := callExecuteIn(t, cs, wire.ExecuteRequest{Code: code})
		wantStatus(t, a, wire.StatusAborted)
		if counted(t, file) != 0 {
			t.Fatalf("%+v: a declined run touched the counter", answer)
		}
		wantStatus(t, callExecuteIn(t, cs, wire.ExecuteRequest{Code: `return await mcp.json.parse({data: "[1]"})`}), wire.StatusSuccess)
	}
}

// A call seen only at run time asks in the middle of the run; the run waits
// in that call and goes on, so what ran before it runs once.
func TestElicitationMidRun(t *testing.T) {
	e := newApprovalEnv(t, fmt.Sprintf(fixtureServer, `{"allow":["fx:count"], "ask":["fx:echo"]}`), nil)
	h := &person{answer: decide(wire.ChoiceApprove)}
	cs := elicitingClient(t, e.pkg, h)
	file := filepath.Join(e.ws, "count.txt")
	code := fmt.Sprintf(`await mcp.fx.count({file: %q}); const ns = ["f","x"].join(""); return await mcp[ns].echo({text: "hi"})`, file)
	a := callExecuteIn(t, cs, wire.ExecuteRequest{Code: code})
	wantStatus(t, a, wire.StatusSuccess)
	if string(a.Result) != `"hi"` || counted(t, file) != 1 || h.times() != 1 {
		t.Fatalf("result %s, count %d, asked %d", a.Result, counted(t, file), h.times())
	}
	// Declined mid-run: the run stops before that call and says so.
	h.answer = decide(wire.ChoiceDeny)
	a = callExecuteIn(t, cs, wire.ExecuteRequest{Code: code})
	wantStatus(t, a, wire.StatusAborted)
	if !strings.Contains(a.Reason, "fx:echo") || counted(t, file) != 2 {
		t.Fatalf("%+v, count %d", a, counted(t, file))
	}
}

// "Always allow" adds the tools to the allow list: the next execution
// does not ask.
func TestElicitationAlways(t *testing.T) {
	e := newApprovalEnv(t, fmt.Sprintf(fixtureServer, `{"allow":["json"], "ask":["fx"]}`), nil)
	h := &person{answer: decide(wire.ChoiceAlways)}
	cs := elicitingClient(t, e.pkg, h)
	code := `return await mcp.fx.echo({text: "a"})`
	wantStatus(t, callExecuteIn(t, cs, wire.ExecuteRequest{Code: code}), wire.StatusSuccess)
	schema, _ := json.Marshal(h.last().RequestedSchema)
	if !strings.Contains(string(schema), wire.ChoiceAlways) {
		t.Fatalf("no always choice: %s", schema)
	}
	wantStatus(t, callExecuteIn(t, cs, wire.ExecuteRequest{Code: code}), wire.StatusSuccess)
	if h.times() != 1 {
		t.Fatalf("asked %d times after always", h.times())
	}
	cfg, err := LoadConfig(filepath.Join(e.ws, ConfigFile))
	if err != nil || !strings.Contains(strings.Join(cfg.Permissions.Allow, ","), "fx:echo") {
		t.Fatalf("allow %v %v", cfg.Permissions.Allow, err)
	}
}

// A missing key is never typed into the form, which the AI client could
// read: the form only has the decision and says where the key goes. The
// person who approves without adding it gets API_KEY_REQUIRED; one who
// adds it first gets the run.
func TestElicitationNeverCollectsAKey(t *testing.T) {
	e := newApprovalEnv(t, `{"permissions": {"allow": ["fx"]}, "mcpServers": {"fx": {"command": "%[1]s", "env": {"SECRET_FOR_TEST": "${FX_TEST_TOKEN}"}}}}`, nil)
	h := &person{answer: decide(wire.ChoiceApprove)}
	cs := elicitingClient(t, e.pkg, h)
	code := `return await mcp.fx.env({name: "SECRET_FOR_TEST"})`
	a := callExecuteIn(t, cs, wire.ExecuteRequest{Code: code})
	if a.ErrorCode != pmlerr.APIKeyRequired || !strings.Contains(a.Error, "FX_TEST_TOKEN") {
		t.Fatalf("%+v", a)
	}
	schema, _ := json.Marshal(h.last().RequestedSchema)
	var s struct{ Properties map[string]any }
	if err := json.Unmarshal(schema, &s); err != nil || len(s.Properties) != 1 || s.Properties["decision"] == nil {
		t.Fatalf("the form asks for more than a decision: %s", schema)
	}
	if msg := h.last().Message; !strings.Contains(msg, filepath.Join(e.ws, ".env")) || !strings.Contains(msg, "FX_TEST_TOKEN=") {
		t.Fatalf("the form does not say where the key goes:\n%s", msg)
	}
	h.answer = func(*mcp.ElicitRequest) *mcp.ElicitResult {
		if err := os.WriteFile(filepath.Join(e.ws, ".env"), []byte("FX_TEST_TOKEN=s3cr3t-value\n"), 0o600); err != nil {
			t.Error(err)
		}
		return decide(wire.ChoiceApprove)(nil)
	}
	a = callExecuteIn(t, cs, wire.ExecuteRequest{Code: code})
	wantStatus(t, a, wire.StatusSuccess)
	if string(a.Result) != `"[REDACTED]"` {
		t.Fatalf("result %s", a.Result)
	}
}

// .pml.json "approvals" chooses the flow: "agent" keeps approval_required
// even for a client that can elicit; "elicitation" refuses, before anything
// runs, what needs an approval when the client cannot elicit. A client
// without elicitation gets approval_required by default.
func TestApprovalFlowSetting(t *testing.T) {
	file := func(e *approvalEnv) string { return filepath.Join(e.ws, "count.txt") }
	code := func(e *approvalEnv) string {
		return fmt.Sprintf(`await mcp.fx.count({file: %q}); return "done"`, file(e))
	}
	cfg := func(flow string) string {
		return fmt.Sprintf(`{"approvals": %q, "permissions": {"allow":["json"], "ask":["fx"]}, "mcpServers": {"fx": {"command": "%%[1]s"}}}`, flow)
	}

	e := newApprovalEnv(t, cfg(ApprovalsAgent), nil)
	h := &person{answer: decide(wire.ChoiceApprove)}
	a := callExecuteIn(t, elicitingClient(t, e.pkg, h), wire.ExecuteRequest{Code: code(e)})
	wantStatus(t, a, wire.StatusApprovalRequired)
	if h.times() != 0 {
		t.Fatal("the agent flow elicited")
	}

	e = newApprovalEnv(t, cfg(ApprovalsElicitation), nil)
	plain := connectInMemory(t, e.pkg.NewMCPServer(), nil)
	for _, c := range []string{code(e), `const ns = ["f","x"].join(""); return await mcp[ns].echo({text: "x"})`} {
		a = callExecuteIn(t, plain, wire.ExecuteRequest{Code: c})
		if a.ErrorCode != pmlerr.ElicitationRequired || !strings.Contains(a.Error, ApprovalsElicitationPreferred) {
			t.Fatalf("%+v", a)
		}
	}
	if counted(t, file(e)) != 0 {
		t.Fatal("a refused run touched the counter")
	}
	wantStatus(t, callExecuteIn(t, plain, wire.ExecuteRequest{Code: `return await mcp.json.parse({data: "[1]"})`}), wire.StatusSuccess)
	wantStatus(t, callExecuteIn(t, elicitingClient(t, e.pkg, h), wire.ExecuteRequest{Code: code(e)}), wire.StatusSuccess)

	e = newApprovalEnv(t, cfg(""), nil)
	wantStatus(t, callExecuteIn(t, connectInMemory(t, e.pkg.NewMCPServer(), nil), wire.ExecuteRequest{Code: code(e)}), wire.StatusApprovalRequired)

	e = newApprovalEnv(t, cfg("sometimes"), nil)
	a = callExecuteIn(t, connectInMemory(t, e.pkg.NewMCPServer(), nil), wire.ExecuteRequest{Code: `return 1`})
	if a.ErrorCode != pmlerr.InvalidConfig || !strings.Contains(a.Error, "approvals") {
		t.Fatalf("%+v", a)
	}
}

// The approval form as a client without the SDK's automatic retry sees it:
// the result carries only the form (no content, so the AI reads nothing it
// could answer); a retry with a made-up state or with other code is
// refused, and the session goes on; the real answer runs the code.
func TestApprovalFormCannotBeForged(t *testing.T) {
	e := newApprovalEnv(t, fmt.Sprintf(fixtureServer, `{"allow":["fx:count", "json"], "ask":["fx:echo"]}`), nil)
	h := &person{answer: decide(wire.ChoiceApprove)}
	cs := connectInMemory(t, e.pkg.NewMCPServer(), &mcp.ClientOptions{ElicitationHandler: h.handle, MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}})
	file := filepath.Join(e.ws, "count.txt")
	code := fmt.Sprintf(`await mcp.fx.count({file: %q}); const ns = ["f","x"].join(""); return await mcp[ns].echo({text: "hi"})`, file)
	call := func(code, state string, answer *mcp.ElicitResult) *mcp.CallToolResult {
		t.Helper()
		p := &mcp.CallToolParams{Name: "execute", Arguments: map[string]any{"code": code}, RequestState: state}
		if answer != nil {
			p.InputResponses = mcp.InputResponseMap{wire.ApprovalInput: answer}
		}
		res, err := cs.CallTool(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	approveAnswer := &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": wire.ChoiceApprove}}

	res := call(code, "", nil)
	form, ok := res.InputRequests[wire.ApprovalInput].(*mcp.ElicitParams)
	if !ok || len(res.Content) != 0 || res.RequestState == "" || !strings.Contains(form.Message, "fx:echo") {
		t.Fatalf("want only the form: %+v", res)
	}
	if a := decodeResult(t, call(code, "made-up", approveAnswer)); a.ErrorCode != pmlerr.WorkflowNotFound {
		t.Fatalf("made-up state: %+v", a)
	}
	if a := decodeResult(t, call(`return 1`, res.RequestState, approveAnswer)); a.ErrorCode != pmlerr.InvalidRequest {
		t.Fatalf("other code: %+v", a)
	}
	// The refused retry spent the workflow: its run is not waiting on.
	if a := decodeResult(t, call(code, res.RequestState, approveAnswer)); a.ErrorCode != pmlerr.WorkflowNotFound {
		t.Fatalf("spent workflow: %+v", a)
	}
	res = call(code, "", nil)
	a := decodeResult(t, call(code, res.RequestState, approveAnswer))
	wantStatus(t, a, wire.StatusSuccess)
	if string(a.Result) != `"hi"` || counted(t, file) != 2 {
		t.Fatalf("result %s, count %d", a.Result, counted(t, file))
	}
}

// Closing the workspace ends a run parked for an approval at once, rather
// than leaving its VM waiting out the workflow's lifetime.
func TestCloseEndsParkedRuns(t *testing.T) {
	e := newApprovalEnv(t, fmt.Sprintf(fixtureServer, `{"ask":["fx:echo"]}`), nil)
	wantStatus(t, e.exec(`const ns = ["f","x"].join(""); return await mcp[ns].echo({text: "hi"})`), wire.StatusApprovalRequired)
	closed := make(chan error, 1)
	go func() { closed <- e.pkg.Close() }()
	select {
	case <-closed:
	case <-time.After(30 * time.Second):
		t.Fatal("Close waited on a parked run")
	}
}

// Over `pml serve`'s Streamable HTTP endpoint too, an eliciting client's
// execute that needs approval completes in one call, after the person's
// answer, for a static and a run-time call alike.
func TestElicitationOverServe(t *testing.T) {
	e := newApprovalEnv(t, fmt.Sprintf(fixtureServer, `{"allow":["json"], "ask":["fx"]}`), nil)
	token, err := ServeToken(e.ws)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(e.pkg.HTTPHandler(ServeOptions{Token: token}))
	defer srv.Close()
	h := &person{answer: decide(wire.ChoiceApprove)}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "ai-client", Version: "0"}, &mcp.ClientOptions{ElicitationHandler: h.handle}).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: gatewaytest.HTTPClient(bearer(token))}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for i, code := range []string{`return await mcp.fx.echo({text: "a"})`, `const ns = ["f","x"].join(""); return await mcp[ns].echo({text: "a"})`} {
		a := callExecuteIn(t, cs, wire.ExecuteRequest{Code: code})
		wantStatus(t, a, wire.StatusSuccess)
		if string(a.Result) != `"a"` || h.times() != i+1 {
			t.Fatalf("result %s, asked %d", a.Result, h.times())
		}
	}
}
