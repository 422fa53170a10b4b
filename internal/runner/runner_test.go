package runner

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/admission"
	"github.com/pml-go/pml/internal/analysis"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/sandbox"
	"github.com/pml-go/pml/internal/tools"
	"github.com/pml-go/pml/internal/tracing"
	"github.com/pml-go/pml/internal/wire"
)

// traces collects what a Sink keeps.
type traces struct {
	mu   sync.Mutex
	kept []tracing.Trace
}

func (k *traces) sink(san *tracing.Sanitizer) Sink {
	return Sink{Sanitizer: san, Keep: func(t tracing.Trace) {
		k.mu.Lock()
		defer k.mu.Unlock()
		k.kept = append(k.kept, t)
	}}
}

func (k *traces) all() []tracing.Trace {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]tracing.Trace(nil), k.kept...)
}

// echo answers every tool with its arguments.
func echo(_ context.Context, _ string, args json.RawMessage) (json.RawMessage, error) {
	return args, nil
}

// sameJSON compares two JSON texts as values: the sanitizer writes objects
// with sorted keys.
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return reflect.DeepEqual(x, y)
}

func analyse(t *testing.T, code string) *analysis.Analysis {
	t.Helper()
	an, err := analysis.Analyze(code)
	if err != nil {
		t.Fatal(err)
	}
	return an
}

func job(t *testing.T, code string, k *traces) Job {
	return Job{Analysis: analyse(t, code), Code: code, WorkflowID: "wf1", Call: echo,
		RoutingOf: func(string) string { return "server" }, Trace: k.sink(nil), Start: time.Now()}
}

// A success answers the value with the kept trace's id; the trace has the
// calls, the code, the side and the DAG in the execute_locally answer's shape.
func TestRunAnswersAndKeepsTheTrace(t *testing.T) {
	for _, local := range []bool{false, true} {
		r := newRunner(sandbox.Limits{})
		r.Local = local
		k := &traces{}
		code := `const a = await mcp.x.one({n: 1}); const b = await mcp.x.two({n: a.n + 1}); console.log("hi"); return b.n`
		out := r.Run(context.Background(), job(t, code, k))
		a := out.Answer
		if a.Status != wire.StatusSuccess || string(a.Result) != "2" || *a.ExecutedLocally != local || a.WorkflowID != "wf1" ||
			a.DurationMS == nil || len(a.Logs) != 1 || out.MemoryBytes <= 0 {
			t.Fatalf("local=%v: answer %+v, memory %d", local, a, out.MemoryBytes)
		}
		kept := k.all()
		if len(kept) != 1 || kept[0].TraceID != a.TraceID || a.TraceID == "" {
			t.Fatalf("kept %d traces, answer trace %q", len(kept), a.TraceID)
		}
		tr := kept[0]
		if !tr.Success || tr.ExecutedLocally != local || tr.Code != code || tr.WorkflowID != "wf1" || len(tr.Tasks) != 2 ||
			tr.Tasks[1].Layer != 1 || tr.Tasks[0].Routing != "server" {
			t.Fatalf("local=%v: trace %+v", local, tr)
		}
		want := analyse(t, code).WireDAGJSON()
		if !sameJSON(t, tr.DAG, want) {
			t.Fatalf("trace dag %s, want %s", tr.DAG, want)
		}
	}
}

// Code without calls still answers tools_used [] and a DAG of no tasks.
func TestRunEmptyListsAreNotNull(t *testing.T) {
	k := &traces{}
	a := newRunner(sandbox.Limits{}).Run(context.Background(), job(t, `return 1`, k)).Answer
	body, err := json.Marshal(a)
	if err != nil || !strings.Contains(string(body), `"tools_used":[]`) {
		t.Fatalf("%s %v", body, err)
	}
	if got := k.all()[0].DAG; !sameJSON(t, got, []byte(`{"tasks":[]}`)) {
		t.Fatalf("dag %s", got)
	}
}

// A failed run answers its mapped error with the trace id, the trace says
// it failed, and the next run answers.
func TestRunErrorAnswerCarriesTheTrace(t *testing.T) {
	r := newRunner(sandbox.Limits{})
	k := &traces{}
	a := r.Run(context.Background(), job(t, "await mcp.x.one({})\nthrow new Error('kaput')", k)).Answer
	if a.Status != wire.StatusError || a.ErrorCode != pmlerr.CodeError || !strings.Contains(a.Error, "kaput") || a.TraceID == "" || a.WorkflowID != "wf1" {
		t.Fatalf("answer %+v", a)
	}
	if kept := k.all(); len(kept) != 1 || kept[0].Success || kept[0].TraceID != a.TraceID || len(kept[0].Tasks) != 1 {
		t.Fatalf("kept %+v", kept)
	}
	if a := r.Run(context.Background(), job(t, "return 3", k)).Answer; a.Status != wire.StatusSuccess || string(a.Result) != "3" {
		t.Fatalf("next run %+v", a)
	}
}

// A run Halt takes answers what Halt says and keeps no trace; a Halt that
// declines leaves the error answer as it is.
func TestRunHaltTakesTheAnswerWithoutATrace(t *testing.T) {
	r := newRunner(sandbox.Limits{})
	k := &traces{}
	stop := errors.New("ask first")
	j := job(t, "return await mcp.x.one({})", k)
	j.Call = func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
		return nil, &sandbox.HaltError{Err: stop}
	}
	j.Halt = func(err error) (wire.Answer, bool) {
		if errors.Is(err, stop) {
			return wire.Answer{Status: wire.StatusApprovalRequired, WorkflowID: "wf1"}, true
		}
		return wire.Answer{}, false
	}
	if a := r.Run(context.Background(), j).Answer; a.Status != wire.StatusApprovalRequired || a.TraceID != "" {
		t.Fatalf("halted answer %+v", a)
	}
	if kept := k.all(); len(kept) != 0 {
		t.Fatalf("a halted run kept %d traces", len(kept))
	}
	j.Call = echo
	if a := r.Run(context.Background(), j).Answer; a.Status != wire.StatusSuccess || len(k.all()) != 1 {
		t.Fatalf("declined halt: %+v", a)
	}
}

// A request lowers the configured budget for its own run only.
func TestRunRequestLowersItsBudget(t *testing.T) {
	r := newRunner(sandbox.Limits{})
	k := &traces{}
	j := job(t, "while (true) {}", k)
	j.Options = &wire.ExecuteOptions{CPUBudgetMS: 50}
	a := r.Run(context.Background(), j).Answer
	if a.Status != wire.StatusError || a.ErrorCode != pmlerr.ExecutionTimeout || !strings.Contains(a.Error, "CPU budget") || a.TraceID == "" {
		t.Fatalf("answer %+v", a)
	}
	if got := r.limitsFor(j.Options); got.CPUBudget != 50*time.Millisecond || r.limitsFor(nil) != r.Limits {
		t.Fatalf("limits %+v", got)
	}
	// A request cannot raise it past the configuration.
	r.Limits = sandbox.Limits{CPUBudget: time.Second, Timeout: 2 * time.Second}
	if got := r.limitsFor(&wire.ExecuteOptions{CPUBudgetMS: 60_000}); got.CPUBudget != time.Second {
		t.Fatalf("raised to %v", got.CPUBudget)
	}
}

// A request's timeout_ms below the CPU budget caps the budget: a busy loop
// then ends at the wall clock the caller set, and the answer says so, not
// that a CPU budget the caller never set ran out (issue 30, item 5).
func TestRunRequestTimeoutNamesTheWallClock(t *testing.T) {
	r := newRunner(sandbox.Limits{})
	j := job(t, "while (true) {}", &traces{})
	j.Options = &wire.ExecuteOptions{TimeoutMS: 80}
	a := r.Run(context.Background(), j).Answer
	if a.ErrorCode != pmlerr.ExecutionTimeout || strings.Contains(a.Error, "CPU") || !strings.Contains(a.Error, "wall-clock limit of 80ms") ||
		a.Details["limit"] != "timeout" || a.Details["limit_ms"] != int64(80) {
		t.Fatalf("answer %+v", a)
	}
}

// A failed run's trace lists the tools it called, not those it planned;
// the plan stays in its DAG (issue 30, item 6).
func TestFailedRunTraceListsCalledTools(t *testing.T) {
	r := newRunner(sandbox.Limits{})
	k := &traces{}
	j := job(t, `await mcp.x.one({}); throw new Error("boom"); await mcp.x.two({})`, k)
	if a := r.Run(context.Background(), j).Answer; a.ErrorCode != pmlerr.CodeError {
		t.Fatalf("answer %+v", a)
	}
	tr := k.all()[0]
	if !slices.Equal(tr.ToolsUsed, []string{"x:one"}) || !slices.Equal(tr.PlannedNotCalled(), []string{"x:two"}) {
		t.Fatalf("tools_used %v, planned not called %v", tr.ToolsUsed, tr.PlannedNotCalled())
	}
}

// A run admission refuses answers OVERLOADED with no trace: nothing ran.
// Once the place is free again, the next run answers.
func TestRunRefusedByAdmission(t *testing.T) {
	adm := admission.New(admission.Limits{MaxExecutions: 1, MaxExecutionsPerTenant: -1, MaxQueue: -1, MemoryCeiling: -1}, sandbox.Limits{})
	r := &Runner{Admission: adm}
	_, held, err := adm.Enter(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	k := &traces{}
	a := r.Run(context.Background(), job(t, "return 1", k)).Answer
	if a.Status != wire.StatusError || a.ErrorCode != pmlerr.Overloaded || a.TraceID != "" || a.WorkflowID != "wf1" || len(k.all()) != 0 {
		t.Fatalf("answer %+v, %d traces", a, len(k.all()))
	}
	held.Exit()
	if a := r.Run(context.Background(), job(t, "return 1", k)).Answer; a.Status != wire.StatusSuccess {
		t.Fatalf("after release: %+v", a)
	}
}

// The trace's secrets are masked by the sink's sanitizer, in the top-level
// trace and in a nested run's child trace, which is linked to its caller.
func TestRunSanitizesTopLevelAndChildTraces(t *testing.T) {
	const secret = "hunter2hunter2xyz"
	san := tracing.NewSanitizer([]string{secret})
	r := newRunner(sandbox.Limits{})
	r.Local = true
	k := &traces{}
	capAn := analyse(t, `return await mcp.x.one({s: args.s})`)
	var call tools.CallFunc
	call = func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		if tool == "cap:leak" {
			return r.RunNested(ctx, Nested{Tool: tool, FQDN: "acme.web.cap.leak.abcd", Analysis: capAn, Args: args, Call: call, Trace: k.sink(san)})
		}
		return echo(ctx, tool, args)
	}
	j := job(t, `return await mcp.cap.leak({s: "`+secret+`"})`, k)
	j.Call, j.Trace = call, k.sink(san)
	a := r.Run(context.Background(), j).Answer
	if a.Status != wire.StatusSuccess || !strings.Contains(string(a.Result), secret) {
		t.Fatalf("answer %+v", a) // the answer is the caller's to mask
	}
	kept := k.all()
	if len(kept) != 2 {
		t.Fatalf("%d traces", len(kept))
	}
	child, top := kept[0], kept[1]
	for _, tr := range kept {
		body, _ := json.Marshal(tr)
		if strings.Contains(string(body), secret) || !tr.ExecutedLocally {
			t.Fatalf("trace leaks or is not local: %s", body)
		}
	}
	if child.ParentTraceID != top.TraceID || child.CapabilityFQDN != "acme.web.cap.leak.abcd" || top.Tasks[0].ChildTraceID != child.TraceID {
		t.Fatalf("child %+v\ntop %+v", child, top.Tasks)
	}
}

// A capability's VM joins the run that calls it: with one execution place,
// a run calling capabilities three deep answers, where a nested VM admitted
// as an execution of its own would be OVERLOADED. A direct nested call,
// outside any run, is admitted as one.
func TestNestedRunsJoinTheCallersAdmission(t *testing.T) {
	adm := admission.New(admission.Limits{MaxExecutions: 1, MaxExecutionsPerTenant: -1, MaxQueue: -1, MemoryCeiling: -1}, sandbox.Limits{})
	r := &Runner{Admission: adm}
	k := &traces{}
	call := capBridge(t, r, map[string]string{
		"cap:a": "return await mcp.cap.b(args)",
		"cap:b": "return await mcp.cap.c(args)",
		"cap:c": "return await mcp.math.add({a: args.n, b: 1})",
	})
	j := job(t, "return await mcp.cap.a({n: 41})", k)
	j.Call = call
	if a := r.Run(context.Background(), j).Answer; a.Status != wire.StatusSuccess || string(a.Result) != "42" {
		t.Fatalf("answer %+v", a)
	}
	_, held, err := adm.Enter(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.RunNested(context.Background(), Nested{Tool: "cap:c", Analysis: analyse(t, "return 1"), Trace: discard})
	if pmlerr.CodeOf(err, "") != pmlerr.Overloaded {
		t.Fatalf("direct nested call with no place free: %v", err)
	}
	held.Exit()
	if out, err := r.RunNested(context.Background(), Nested{Tool: "cap:c", Analysis: analyse(t, "return 1"), Trace: discard}); err != nil || string(out) != "1" {
		t.Fatalf("direct nested call: %s %v", out, err)
	}
}
