package gateway_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/tracing"
	"github.com/pml-go/pml/internal/wire"
)

// storedSize is the size of a trace's JSON as the tree answer holds it.
func storedSize(t *testing.T, base, key, id string) int {
	t.Helper()
	code, body := apiCall(t, http.MethodGet, base+"/api/traces/"+id, key, nil, nil)
	if code != http.StatusOK {
		t.Fatalf("GET /api/traces/%s: %d", id, code)
	}
	var n struct {
		Trace json.RawMessage `json:"trace"`
	}
	decode(t, body, &n)
	return len(n.Trace)
}

// A key holder's server-side loop leaves a bounded trace: the first and
// last calls as tasks, the others counted, and the list counts them all.
func TestServerLoopTraceIsBounded(t *testing.T) {
	g := gatewaytest.Start(t, gateway.Options{})
	s := g.Connect(t, g.Key, false)
	a := gatewaytest.Execute(t, s, wire.ExecuteRequest{Code: `
		let n = 0;
		for (let i = 0; i < 3000; i++) n = await mcp.math.add({ a: n, b: 1 });
		try { await mcp.json.parse({ data: "{" }); } catch (e) {}
		return n;`})
	if a.Status != wire.StatusSuccess {
		t.Fatalf("%+v", a)
	}
	tr := getTree(t, g.URL, g.Key, a.TraceID).Trace
	want := tracing.DefaultHeadSpans + tracing.DefaultTailSpans
	tc := tr.Truncated
	if len(tr.Tasks) != want || tc == nil || tc.Spans != 3001 || tc.SpansAggregated != 3001-want || tc.HeadSpans != tracing.DefaultHeadSpans {
		t.Fatalf("%d tasks, truncation %+v", len(tr.Tasks), tc)
	}
	if len(tc.Aggregates) != 1 || tc.Aggregates[0].Tool != "math:add" || tc.Aggregates[0].Calls != 3001-want {
		t.Errorf("aggregates %+v", tc.Aggregates)
	}
	if last := tr.Tasks[len(tr.Tasks)-1]; last.TaskID != "t3001" || last.Success {
		t.Errorf("last task %+v", last)
	}
	l := listTraces(t, g.URL, g.Key, "")
	if len(l.Traces) != 1 || l.Traces[0].TaskCount != 3001 || l.Traces[0].FailedTasks != 1 {
		t.Errorf("summary %+v", l.Traces)
	}
}

// A loop until the deadline answers promptly and stores a trace within the
// byte cap.
func TestServerLoopUntilDeadlineIsBounded(t *testing.T) {
	g := gatewaytest.Start(t, gateway.Options{})
	s := g.Connect(t, g.Key, false)
	start := time.Now()
	a := gatewaytest.Execute(t, s, wire.ExecuteRequest{
		Code:    `const pad = "p".repeat(500); while (true) { await mcp.json.parse({ data: JSON.stringify({ pad }) }); }`,
		Options: &wire.ExecuteOptions{TimeoutMS: 1500},
	})
	took := time.Since(start)
	if a.Status != wire.StatusError || a.ErrorCode != "EXECUTION_TIMEOUT" || a.TraceID == "" {
		t.Fatalf("%+v", a)
	}
	// The deadline plus ample slack for a loaded machine; the unbounded
	// trace of this loop took tens of seconds to write.
	if took > 1500*time.Millisecond+5*time.Second {
		t.Errorf("answered after %v", took)
	}
	tr := getTree(t, g.URL, g.Key, a.TraceID).Trace
	if n := storedSize(t, g.URL, g.Key, a.TraceID); n > tracing.MaxTraceBytes {
		t.Errorf("stored trace is %d bytes, cap %d", n, tracing.MaxTraceBytes)
	}
	// How many calls fit in the deadline depends on the machine (and the
	// race detector); the kept ones never pass the cap.
	calls := len(tr.Tasks)
	if tr.Truncated != nil {
		calls = tr.Truncated.Spans
	}
	if len(tr.Tasks) > tracing.DefaultHeadSpans+tracing.DefaultTailSpans || (calls > len(tr.Tasks)) != (tr.Truncated != nil && tr.Truncated.SpansAggregated > 0) {
		t.Errorf("%d tasks, truncation %+v", len(tr.Tasks), tr.Truncated)
	}
	t.Logf("answered after %v; %d calls, %d kept, %d bytes", took, calls, len(tr.Tasks), storedSize(t, g.URL, g.Key, a.TraceID))
}

// A package's trace with more tasks than the bounds keep is folded on
// ingest: the gateway does not trust the client to have bounded it.
func TestIngestedTraceIsBounded(t *testing.T) {
	g := gatewaytest.Start(t, gateway.Options{})
	tools := make([]string, 3000)
	for i := range tools {
		tools[i] = "fs:read"
	}
	tr := traceAt(time.Now(), 0, "wf", true, tools...)
	tr.Tasks[2999].Success = false
	postTraces(t, g.URL, g.Key, tr)
	got := getTree(t, g.URL, g.Key, tr.TraceID).Trace
	if len(got.Tasks) != tracing.DefaultHeadSpans+tracing.DefaultTailSpans || got.Truncated == nil || got.Truncated.Spans != 3000 {
		t.Fatalf("%d tasks, truncation %+v", len(got.Tasks), got.Truncated)
	}
	if got.Tasks[len(got.Tasks)-1].TaskID != "t3000" || got.Tasks[len(got.Tasks)-1].Success {
		t.Errorf("last task %+v", got.Tasks[len(got.Tasks)-1])
	}
}

func TestTracesRejectBadTruncation(t *testing.T) {
	g := gatewaytest.Start(t, gateway.Options{})
	valid := func() tracing.Trace { return traceAt(time.Now(), 0, "wf", true, "json:parse") }
	mutate := func(f func(*tracing.Truncation)) any {
		tr := valid()
		tr.Truncated = &tracing.Truncation{Spans: 5, SpansAggregated: 4, HeadSpans: 1,
			Aggregates: []tracing.ToolAggregate{{Tool: "json:parse", Calls: 4, Errors: 1, TotalMS: 4, MinMS: 1, MaxMS: 1}}}
		f(tr.Truncated)
		return map[string]any{"traces": []tracing.Trace{valid(), tr}}
	}
	many := make([]tracing.ToolAggregate, 1001)
	for i := range many {
		many[i] = tracing.ToolAggregate{Tool: fmt.Sprintf("t:%d", i), Calls: 1}
	}
	cases := []struct {
		name string
		body any
		want string
	}{
		{"negative spans", mutate(func(tc *tracing.Truncation) { tc.Spans = -1 }), "must not be negative"},
		{"head past the tasks", mutate(func(tc *tracing.Truncation) { tc.HeadSpans = 2 }), "head_spans 2 outside"},
		{"more errors than calls", mutate(func(tc *tracing.Truncation) { tc.Aggregates[0].Errors = 9 }), "errors <= calls"},
		{"negative duration", mutate(func(tc *tracing.Truncation) { tc.Aggregates[0].MaxMS = -1 }), "durations must not be negative"},
		{"nameless tool", mutate(func(tc *tracing.Truncation) { tc.Aggregates[0].Tool = "" }), "aggregates[0].tool must be"},
		{"too many lines", mutate(func(tc *tracing.Truncation) { tc.Aggregates = many }), "1001 aggregate lines"},
		{"long note", mutate(func(tc *tracing.Truncation) { tc.Dropped = []string{strings.Repeat("n", 300)} }), "dropped notes are at most"},
	}
	for _, c := range cases {
		code, body := apiCall(t, http.MethodPost, g.URL+"/api/traces", g.Key, c.body, nil)
		var e struct{ Error, Message string }
		_ = json.Unmarshal(body, &e)
		if code != http.StatusBadRequest || e.Error != "invalid_traces" || !strings.Contains(e.Message, c.want) {
			t.Errorf("%s: %d %s; want 400 invalid_traces mentioning %q", c.name, code, body, c.want)
		}
		if stored, _ := postTraces(t, g.URL, g.Key, valid()); stored != 1 {
			t.Fatalf("%s: next post stored %d", c.name, stored)
		}
	}
	// A consistent truncation is taken, and counted in the list.
	good := mutate(func(*tracing.Truncation) {})
	if code, body := apiCall(t, http.MethodPost, g.URL+"/api/traces", g.Key, good, nil); code != http.StatusOK {
		t.Fatalf("valid truncation refused: %d %s", code, body)
	}
}

// The tree answer stays within its byte budget however large the children
// a tenant stored; the omitted ones are counted.
func TestTraceTreeIsBoundedInBytes(t *testing.T) {
	g := gatewaytest.Start(t, gateway.Options{})
	root := traceAt(time.Now(), 0, "wf", true, "cap:x")
	postTraces(t, g.URL, g.Key, root)
	chunk := strings.Repeat("c", 9<<10) // under the sanitizer's string cap
	var big []string
	for range 25 {
		big = append(big, chunk)
	}
	payload, _ := json.Marshal(big)
	for i := range 12 {
		child := traceAt(time.Now(), time.Duration(i)*time.Millisecond, "wf", true, "fs:read")
		child.ParentTraceID = root.TraceID
		child.Tasks[0].Args, child.Tasks[0].Result = payload, payload
		postTraces(t, g.URL, g.Key, child)
	}
	code, body := apiCall(t, http.MethodGet, g.URL+"/api/traces/"+root.TraceID, g.Key, nil, nil)
	if code != http.StatusOK {
		t.Fatalf("tree: %d", code)
	}
	var n struct {
		Children        []json.RawMessage `json:"children"`
		ChildrenOmitted int               `json:"children_omitted"`
	}
	decode(t, body, &n)
	if len(body) > 4<<20+64<<10 || n.ChildrenOmitted == 0 || len(n.Children)+n.ChildrenOmitted != 12 {
		t.Errorf("tree answer of %d bytes: %d children, %d omitted", len(body), len(n.Children), n.ChildrenOmitted)
	}
}
