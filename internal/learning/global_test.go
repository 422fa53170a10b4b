package learning

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/outputtype"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/store/sqlite"
	"github.com/pml-go/pml/internal/tracing"
)

// stdTools stands for the tools every tenant sees in these tests.
func stdTools(tool string) bool {
	ns, _, _ := strings.Cut(tool, ":")
	return ns == "json" || ns == "math" || ns == "crypto"
}

func globalLearner(t *testing.T, optOut ...store.Scope) (*Learner, store.Store) {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "pml.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	l := New(Config{Store: st, Global: GlobalConfig{K: DefaultGlobalK, Common: stdTools, OptOut: optOut}})
	t.Cleanup(l.Close)
	return l, st
}

var traceSeq int

// parseThenAdd is a trace of json:parse, then math:add fed by its result,
// each returning result.
func parseThenAdd(parsed, sum string) tracing.Trace {
	traceSeq++
	now := time.Now()
	return tracing.Trace{TraceID: fmt.Sprintf("%032x", traceSeq), Success: true, StartedAt: now, Tasks: []tracing.Task{
		{TaskID: "t1", ToolID: "json:parse", Success: true, StartedAt: now, Result: json.RawMessage(parsed)},
		{TaskID: "t2", ToolID: "math:add", Success: true, StartedAt: now.Add(time.Millisecond), Result: json.RawMessage(sum)},
	}, DAG: json.RawMessage(`{"tasks":[{"id":"t1","tool":"json:parse","depends_on":[]},{"id":"t2","tool":"math:add","depends_on":["t1"]}]}`)}
}

func org(name string) store.Scope { return store.Scope{Org: name, Project: "p"} }

var fresh = store.Scope{Org: "newcomer", Project: "p"}

// globalNext is what the global layer lifts after tool for a tenant with
// no history.
func globalNext(t *testing.T, l *Learner, tool string) []Neighbor {
	t.Helper()
	return l.Successors(t.Context(), fresh, 5)[tool]
}

// The k rule: an edge two orgs share is not global, three orgs' is; one
// org posting many traces, from many projects, counts once; an org that
// opted out does not count.
func TestGlobalEdgeNeedsKOrgs(t *testing.T) {
	l, _ := globalLearner(t, store.Scope{Org: "quiet"})
	for range 50 {
		for _, p := range []string{"a", "b", "c", "d"} {
			l.ObserveTrace(store.Scope{Org: "busy", Project: p}, parseThenAdd(`{"a":1}`, `2`))
		}
	}
	l.ObserveTrace(org("quiet"), parseThenAdd(`{"a":1}`, `2`))
	l.ObserveTrace(org("second"), parseThenAdd(`{"a":1}`, `2`))
	l.Wait()
	if next := globalNext(t, l, "json:parse"); next != nil {
		t.Fatalf("an edge of busy (200 traces, 4 projects), second and quiet (opted out) is global: %v", next)
	}
	if own := l.Successors(t.Context(), store.Scope{Org: "busy", Project: "a"}, 5)["json:parse"]; len(own) != 1 || own[0] != (Neighbor{"math:add", 50}) {
		t.Fatalf("busy's own graph: %v", own)
	}
	l.ObserveTrace(org("third"), parseThenAdd(`{"a":1}`, `2`))
	l.Wait()
	next := globalNext(t, l, "json:parse")
	if len(next) != 1 || next[0].Tool != "math:add" || next[0].Count != globalPrior {
		t.Fatalf("three orgs share json:parse → math:add; a newcomer gets %v", next)
	}
	// Its count says nothing of busy's 200 runs.
	if v := l.global.current(); v.succ["json:parse"][0].Count != 3 {
		t.Fatalf("global count %v, want 3 orgs", v.succ["json:parse"])
	}
}

// An edge a tool no tenant shares (a tenant's own server) never enters the
// global graph, however many orgs have it.
func TestGlobalGraphOnlyCommonTools(t *testing.T) {
	l, _ := globalLearner(t)
	for _, o := range []string{"a", "b", "c", "d"} {
		now := time.Now()
		traceSeq++
		l.ObserveTrace(org(o), tracing.Trace{TraceID: fmt.Sprintf("%032x", traceSeq), StartedAt: now, Tasks: []tracing.Task{
			{TaskID: "t1", ToolID: "json:parse", Success: true, StartedAt: now},
			{TaskID: "t2", ToolID: "mine:secret_step", Success: true, StartedAt: now.Add(time.Millisecond), Result: json.RawMessage(`{"n":1}`)},
		}})
	}
	l.Wait()
	if next := globalNext(t, l, "json:parse"); next != nil {
		t.Fatalf("a tenant's own tool entered the global graph: %v", next)
	}
	if _, ok := l.OutputTypes(t.Context(), fresh)("mine:secret_step", true); ok {
		t.Fatal("a tenant's own tool's type entered the global layer")
	}
	if s, ok := l.OutputTypes(t.Context(), org("a"))("mine:secret_step", false); !ok || string(s) != `{"properties":{"n":{"type":"integer"}},"type":"object"}` {
		t.Fatalf("a's own type of its own tool: %s %v", s, ok)
	}
}

// Output types cross tenants under the same rule: three orgs typed a tool
// before a newcomer sees its type; keys fewer than three orgs saw, and
// keys taken from data, are never shown.
func TestGlobalTypesNeedKOrgs(t *testing.T) {
	l, _ := globalLearner(t)
	l.ObserveTrace(org("a"), parseThenAdd(`{"items":[1,2],"acme_codename":true}`, `3`))
	l.ObserveTrace(org("b"), parseThenAdd(`{"items":[],"report.pdf":4}`, `3.5`))
	l.Wait()
	types := l.OutputTypes(t.Context(), fresh)
	if s, ok := types("math:add", true); ok {
		t.Fatalf("two orgs' type is global: %s", s)
	}
	l.ObserveTrace(org("c"), parseThenAdd(`{"items":["x"]}`, `4`))
	l.Wait()
	types = l.OutputTypes(t.Context(), fresh)
	if s, ok := types("math:add", true); !ok || string(s) != `{"type":"number"}` {
		t.Fatalf("math:add globally: %s %v", s, ok)
	}
	s, ok := types("json:parse", true)
	// b's object was keyed by data (a file name): a map. So only two orgs'
	// objects had "items", which is typed with the other values, whose
	// keys only one org saw.
	if !ok || strings.Contains(string(s), "acme_codename") || strings.Contains(string(s), "report") ||
		string(s) != `{"additionalProperties":{"items":{"type":["integer","string"]},"type":["array","integer","boolean"]},"type":"object"}` {
		t.Fatalf("json:parse globally: %s", s)
	}
	// A tenant's own type wins over the global one.
	if own, _ := l.OutputTypes(t.Context(), org("a"))("math:add", true); string(own) != `{"type":"integer"}` {
		t.Fatalf("a's own math:add: %s", own)
	}
}

func TestGlobalTypeKeepsKeysOfKOrgs(t *testing.T) {
	cs := []orgSchema{
		{"a", outputtype.Decode(json.RawMessage(`{"type":"object","properties":{"sum":{"type":"integer"},"only_a":{"type":"string"}}}`))},
		{"b", outputtype.Decode(json.RawMessage(`{"type":"object","properties":{"sum":{"type":"number"}}}`))},
		{"c", outputtype.Decode(json.RawMessage(`{"type":"object","properties":{"sum":{"type":"integer"},"nested":{"type":"object","properties":{"deep_c":{"type":"null"}}}}}`))},
	}
	got := string(outputtype.Encode(globalType(cs, 3)))
	want := `{"additionalProperties":{"additionalProperties":{"type":"null"},"type":["object","string"]},"properties":{"sum":{"type":"number"}},"type":"object"}`
	if got != want {
		t.Fatalf("global type\n got %s\nwant %s", got, want)
	}
}

func TestToolOutputSchema(t *testing.T) {
	for in, want := range map[string]string{
		`{"sum": 3, "items": [{"id": 1}, {"id": 2, "x": "y"}]}`: `{"properties":{"items":{"items":{"properties":{"id":{"type":"integer"},"x":{"type":"string"}},"type":"object"},"type":"array"},"sum":{"type":"integer"}},"type":"object"}`,
		`{"a.json": 10, "b.json": 12}`:                          `{"additionalProperties":{"type":"integer"},"type":"object"}`,
		`{"bob@example.com": {"age": 3}}`:                       `{"additionalProperties":{"properties":{"age":{"type":"integer"}},"type":"object"},"type":"object"}`,
		`{"2024-01-01": 1}`:                                     `{"additionalProperties":{"type":"integer"},"type":"object"}`,
		`{"3f2a9c1e": 1}`:                                       `{"additionalProperties":{"type":"integer"},"type":"object"}`,
		`"text"`:                                                `{"type":"string"}`,
		`{"_truncated": true, "preview": "{\"a\"", "original_length": 300000}`: ``,
		`not json`: ``,
	} {
		if got := string(ToolOutputSchema(json.RawMessage(in), nil)); got != want {
			t.Errorf("ToolOutputSchema(%s)\n got %s\nwant %s", in, got, want)
		}
	}
	many := map[string]int{}
	for i := range outputtype.MaxProps + 1 {
		many[fmt.Sprintf("k%c%c", 'a'+i/26, 'a'+i%26)] = i
	}
	raw, _ := json.Marshal(many)
	if got := string(ToolOutputSchema(raw, nil)); got != `{"additionalProperties":{"type":"integer"},"type":"object"}` {
		t.Fatalf("an object of %d keys: %s", len(many), got)
	}
}

// One tenant's runs widen a tool's type; objects whose keys differ more
// than they agree become a map.
func TestMergeTool(t *testing.T) {
	of := func(s string) schema { return outputtype.Decode(ToolOutputSchema(json.RawMessage(s), nil)) }
	for _, c := range []struct{ a, b, want string }{
		{`{"n":1}`, `{"n":1.5,"extra":null}`, `{"properties":{"extra":{"type":"null"},"n":{"type":"number"}},"type":"object"}`},
		{`{"alice":1,"bob":2}`, `{"carol":3,"dave":"x"}`, `{"additionalProperties":{"type":["integer","string"]},"type":"object"}`},
		{`[1]`, `["a"]`, `{"items":{"type":["integer","string"]},"type":"array"}`},
		{`{}`, `{"n":1}`, `{"properties":{"n":{"type":"integer"}},"type":"object"}`},
		{`"s"`, `{"n":1}`, `{"properties":{"n":{"type":"integer"}},"type":["string","object"]}`},
	} {
		if got := string(outputtype.Encode(outputtype.MergeTypes(of(c.a), of(c.b)))); got != c.want {
			t.Errorf("mergeTool(%s, %s)\n got %s\nwant %s", c.a, c.b, got, c.want)
		}
	}
}

// The blend: the global graph's proportions for a tool the tenant never
// ran; its own runs dominating as they grow.
func TestBlend(t *testing.T) {
	v := &globalView{succ: map[string][]Neighbor{"a:x": {{"b:y", 6}, {"c:z", 4}}}, total: map[string]int64{"a:x": 10}}
	if got := blend(nil, v, 5)["a:x"]; fmt.Sprint(got) != "[{b:y 6} {c:z 4}]" {
		t.Fatalf("no history: %v", got)
	}
	few := buildGraph([]store.ToolEdge{{From: "a:x", To: "d:w", Follows: 2}, {From: "q:q", To: "r:r", Follows: 1}})
	got := blend(few, v, 5)
	// 2 own runs: the global part weighs 10/(1+2/10) = 8.33 runs.
	if fmt.Sprint(got["a:x"]) != "[{b:y 5} {c:z 3} {d:w 2}]" || fmt.Sprint(got["q:q"]) != "[{r:r 1}]" {
		t.Fatalf("a little history: %v", got)
	}
	many := buildGraph([]store.ToolEdge{{From: "a:x", To: "d:w", Follows: 200}})
	// 200 own runs: 10/21 = 0.48 runs, spread: nothing left.
	if got := blend(many, v, 5)["a:x"]; fmt.Sprint(got) != "[{d:w 200}]" {
		t.Fatalf("much history: %v", got)
	}
	if got := many.blendWith(v, 5); !slices.Equal(got["a:x"], []Neighbor{{"d:w", 200}}) {
		t.Fatalf("blendWith: %v", got)
	}
}

// With K 0 nothing is shared or read.
func TestGlobalOff(t *testing.T) {
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "pml.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	l := New(Config{Store: st, Global: GlobalConfig{Common: stdTools}})
	defer l.Close()
	for _, o := range []string{"a", "b", "c"} {
		l.ObserveTrace(org(o), parseThenAdd(`1`, `2`))
	}
	l.Wait()
	if next := globalNext(t, l, "json:parse"); next != nil {
		t.Fatalf("the layer is off, yet: %v", next)
	}
	if edges, _ := st.GlobalToolEdges(t.Context(), store.GlobalEdgeQuery{MinOrgs: 1, Limit: 10}); len(edges) != 0 {
		t.Fatalf("shared with the layer off: %v", edges)
	}
}

// Withdraw unshares what an org shared before it opted out.
func TestWithdrawOptedOut(t *testing.T) {
	l, st := globalLearner(t)
	for _, o := range []string{"a", "b", "c"} {
		l.ObserveTrace(org(o), parseThenAdd(`1`, `2`))
	}
	l.Wait()
	if globalNext(t, l, "json:parse") == nil {
		t.Fatal("three orgs: not global")
	}
	l.Close()
	again := New(Config{Store: st, Global: GlobalConfig{K: DefaultGlobalK, Common: stdTools, OptOut: []store.Scope{{Org: "c"}}}})
	defer again.Close()
	if err := again.Withdraw(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := again.global.refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	if next := again.Successors(t.Context(), fresh, 5)["json:parse"]; next != nil {
		t.Fatalf("after c opted out: %v", next)
	}
	if _, ok := again.OutputTypes(t.Context(), fresh)("math:add", true); ok {
		t.Fatal("c's types still count")
	}
}

// Results waiting to be typed are bounded in bytes: past the bound a
// trace's results are not typed, and the next trace's are once there is
// room.
func TestTypingIsBounded(t *testing.T) {
	l, _ := globalLearner(t)
	l.typing.Store(maxTypingBytes)
	l.ObserveTrace(org("a"), parseThenAdd(`1`, `2`))
	l.Wait()
	if _, ok := l.OutputTypes(t.Context(), org("a"))("math:add", false); ok {
		t.Fatal("typed past the bound")
	}
	l.typing.Store(0)
	l.ObserveTrace(org("a"), parseThenAdd(`1`, `2`))
	l.Wait()
	if _, ok := l.OutputTypes(t.Context(), org("a"))("math:add", false); !ok || l.typing.Load() != 0 {
		t.Fatalf("not typed with room, or bytes left counted: %d", l.typing.Load())
	}
}

// A failing store is asked again only when the last read is stale once
// more, not at every discover.
func TestGlobalReadFailureWaits(t *testing.T) {
	l, st := globalLearner(t)
	_ = st.Close()
	if err := l.global.refresh(t.Context()); err == nil {
		t.Fatal("a closed store read")
	}
	if l.global.stale(time.Now()) {
		t.Fatal("a failed read is retried at once")
	}
	if !l.global.stale(time.Now().Add(globalStale)) {
		t.Fatal("a failed read is never retried")
	}
}
