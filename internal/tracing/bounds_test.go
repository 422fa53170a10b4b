package tracing

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/tools"
)

// echo is a call that returns its result argument, or fails for tools
// named "*:fail".
func echo(result json.RawMessage) tools.CallFunc {
	return func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		if strings.HasSuffix(tool, ":fail") {
			return nil, pmlerr.New(pmlerr.ToolError, "failed")
		}
		return result, nil
	}
}

func taskIDs(tasks []Task) []string {
	ids := make([]string, len(tasks))
	for i, t := range tasks {
		ids[i] = t.TaskID
	}
	return ids
}

// A long run keeps its first and last calls as tasks and counts the rest
// per tool, with errors and timings.
func TestRecorderKeepsHeadAndTailAndAggregatesTheRest(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), step: time.Millisecond}
	rec := NewRecorder("tr", RecorderOptions{Now: clock.Now, HeadSpans: 3, TailSpans: 2})
	call := rec.Wrap(echo(json.RawMessage(`3`)))
	for i := range 20 {
		tool := "math:add"
		if i%4 == 3 {
			tool = "math:fail"
		}
		_, _ = call(tools.WithCallSeq(context.Background(), i), tool, json.RawMessage(`{"a":1}`))
	}
	tr := rec.Finish(Trace{}, nil)
	if got, want := taskIDs(tr.Tasks), []string{"t1", "t2", "t3", "t19", "t20"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("tasks = %v, want %v", got, want)
	}
	tc := tr.Truncated
	if tc == nil || tc.Spans != 20 || tc.SpansAggregated != 15 || tc.HeadSpans != 3 {
		t.Fatalf("truncation = %+v", tc)
	}
	// Calls 4..18 (seq 3..17): seq 3, 7, 11, 15 fail.
	want := []ToolAggregate{
		{Tool: "math:add", Calls: 11, TotalMS: 11, MinMS: 1, MaxMS: 1},
		{Tool: "math:fail", Calls: 4, Errors: 4, TotalMS: 4, MinMS: 1, MaxMS: 1},
	}
	if !reflect.DeepEqual(tc.Aggregates, want) {
		t.Errorf("aggregates = %+v\nwant %+v", tc.Aggregates, want)
	}
	if !reflect.DeepEqual(tr.ToolsUsed, []string{"math:add", "math:fail"}) {
		t.Errorf("tools_used = %v", tr.ToolsUsed)
	}
}

// A call pushed out of the tail while it runs is aggregated when it ends,
// and one still running at Finish is aggregated as an unfinished failure.
func TestRecorderCallEvictedWhileRunning(t *testing.T) {
	rec := NewRecorder("tr", RecorderOptions{HeadSpans: 1, TailSpans: 1})
	release := map[string]chan struct{}{"s:a": make(chan struct{}), "s:b": make(chan struct{}), "s:c": make(chan struct{})}
	entered := make(chan string)
	call := rec.Wrap(func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		if ch, ok := release[tool]; ok {
			entered <- tool
			<-ch
		}
		return json.RawMessage(`1`), nil
	})
	var wg sync.WaitGroup
	start := func(tool string) {
		wg.Add(1)
		go func() { defer wg.Done(); _, _ = call(context.Background(), tool, nil) }()
		<-entered
	}
	_, _ = call(context.Background(), "h:first", nil) // the head
	start("s:a")                                      // tail
	start("s:b")                                      // evicts a, still running
	close(release["s:a"])
	start("s:c") // evicts b, still running
	close(release["s:b"])
	// c stays in the tail; let b's end land before finishing.
	deadline := time.Now().Add(10 * time.Second)
	for {
		rec.mu.Lock()
		n := len(rec.evicted)
		rec.mu.Unlock()
		if n == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	tr := rec.Finish(Trace{}, nil)
	close(release["s:c"])
	wg.Wait()
	if got := taskIDs(tr.Tasks); !reflect.DeepEqual(got, []string{"t1", "t4"}) {
		t.Fatalf("tasks = %v", got)
	}
	if tr.Tasks[1].Error != unfinishedError {
		t.Errorf("t4 still running = %+v", tr.Tasks[1])
	}
	if tc := tr.Truncated; tc == nil || tc.SpansAggregated != 2 || tc.Spans != 4 || len(tc.Aggregates) != 2 {
		t.Fatalf("truncation = %+v", tc)
	}

	// A call evicted and still running at Finish counts as an unfinished error.
	rec = NewRecorder("tr2", RecorderOptions{HeadSpans: 1, TailSpans: 1})
	hang := make(chan struct{})
	defer close(hang)
	call = rec.Wrap(func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		if tool == "s:hang" {
			entered <- tool
			<-hang
		}
		return nil, nil
	})
	_, _ = call(context.Background(), "h:first", nil)
	go func() { _, _ = call(context.Background(), "s:hang", nil) }()
	<-entered
	_, _ = call(context.Background(), "s:last", nil)
	tr = rec.Finish(Trace{}, nil)
	agg := tr.Truncated.Aggregates
	if len(agg) != 1 || agg[0].Tool != "s:hang" || agg[0].Errors != 1 {
		t.Errorf("aggregates = %+v", agg)
	}
}

// Whatever the run does, the recorder holds at most the kept calls and its
// payload budget: no per-call state survives for the aggregated ones.
func TestRecorderStateIsBounded(t *testing.T) {
	rec := NewRecorder("tr", RecorderOptions{})
	big := json.RawMessage(`"` + strings.Repeat("x", 300<<10) + `"`)
	call := rec.Wrap(echo(big))
	for i := range 20_000 {
		_, _ = call(tools.WithCallSeq(context.Background(), i), "t:x", big)
	}
	rec.mu.Lock()
	kept, used, evicted, payload := len(rec.head)+len(rec.tail), len(rec.used), len(rec.evicted), rec.payload
	rec.mu.Unlock()
	if kept != DefaultHeadSpans+DefaultTailSpans || used != kept || evicted != 0 {
		t.Errorf("kept %d calls, %d ordinals, %d evicted; want %d, %d, 0", kept, used, evicted, DefaultHeadSpans+DefaultTailSpans, kept)
	}
	if payload > maxRecordedPayload+2*kept*64 {
		t.Errorf("payload held = %d bytes, over the budget of %d", payload, maxRecordedPayload)
	}
	tr := rec.Finish(Trace{}, nil)
	if len(tr.Tasks) != kept || tr.Truncated.Spans != 20_000 || tr.Truncated.SpansAggregated != 20_000-kept {
		t.Errorf("tasks %d, truncation %+v", len(tr.Tasks), tr.Truncated)
	}
}

// Values over the recorder's bounds are kept as markers with a preview of
// their text; the budget decides how much each keeps.
func TestRecorderCapturesBoundedPrefixes(t *testing.T) {
	rec := NewRecorder("tr", RecorderOptions{})
	results := map[string]json.RawMessage{
		"v:huge":  json.RawMessage(`"` + strings.Repeat("h", 1<<20) + `"`),
		"v:200k":  json.RawMessage(`"` + strings.Repeat("m", 200<<10) + `"`),
		"v:small": json.RawMessage(`{"ok":true}`),
	}
	call := rec.Wrap(func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		return results[tool], nil
	})
	_, _ = call(context.Background(), "v:huge", nil)
	_, _ = call(context.Background(), "v:small", nil)
	for range 30 {
		_, _ = call(context.Background(), "v:200k", nil)
	}
	tr := rec.Finish(Trace{}, nil)
	marker := func(v json.RawMessage) (preview *string, n int) {
		var m struct {
			Truncated bool    `json:"_truncated"`
			Preview   *string `json:"preview"`
			N         int     `json:"original_length"`
		}
		if err := json.Unmarshal(v, &m); err != nil || !m.Truncated {
			return nil, -1
		}
		return m.Preview, m.N
	}
	if p, n := marker(tr.Tasks[0].Result); p == nil || n != len(results["v:huge"]) || len(*p) > previewWindow {
		t.Errorf("1 MiB result kept as %.100s", tr.Tasks[0].Result)
	}
	if string(tr.Tasks[1].Result) != `{"ok":true}` {
		t.Errorf("small result = %s", tr.Tasks[1].Result)
	}
	// The budget takes whole results while they fit, then markers with a
	// preview while it has room for one, then bare markers.
	room, wantWhole := maxRecordedPayload-len(tr.Tasks[0].Result)-len(tr.Tasks[1].Result), 0
	for ; room >= len(results["v:200k"]); room -= len(results["v:200k"]) {
		wantWhole++
	}
	whole, previews := 0, 0
	for _, task := range tr.Tasks[2:] {
		if len(task.Result) == len(results["v:200k"]) {
			whole++
		} else if p, _ := marker(task.Result); p != nil {
			previews++
		}
	}
	if whole != wantWhole || previews == 0 {
		t.Errorf("%d 200 KiB results kept whole, %d as previews; want %d and some", whole, previews, wantWhole)
	}
	if p, n := marker(tr.Tasks[len(tr.Tasks)-1].Result); p != nil || n != len(results["v:200k"]) {
		t.Errorf("past the budget: %.100s", tr.Tasks[len(tr.Tasks)-1].Result)
	}
}

// A secret cut by the recorder's window is not leaked by the preview the
// sanitizer makes of it, and sanitizing twice gives the same trace.
func TestCapturedPrefixDoesNotLeakACutSecret(t *testing.T) {
	secret := "sk-" + strings.Repeat("Z", 60)
	for _, at := range []int{PreviewBytes - 10, previewWindow - 10} {
		result := json.RawMessage(`"` + strings.Repeat("x", at-2) + " " + secret + " " + strings.Repeat("y", 1<<20) + `"`)
		rec := NewRecorder("tr", RecorderOptions{})
		_, _ = rec.Wrap(echo(result))(context.Background(), "a:b", nil)
		raw := rec.Finish(Trace{}, nil)
		s := NewSanitizer(nil)
		clean := s.Trace(raw)
		b, _ := json.Marshal(clean)
		if strings.Contains(string(b), "sk-Z") {
			t.Errorf("secret at %d leaks: %s", at, b)
		}
		again, _ := json.Marshal(s.Trace(clean))
		if string(again) != string(b) {
			t.Errorf("not idempotent at %d", at)
		}
	}

	// The same holds for a long error message.
	rec := NewRecorder("tr", RecorderOptions{})
	_, _ = rec.Wrap(func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		return nil, errors.New(strings.Repeat("e", previewWindow-11) + " " + secret + " " + strings.Repeat("e", 1<<20))
	})(context.Background(), "a:b", nil)
	raw := rec.Finish(Trace{}, nil)
	if len(raw.Tasks[0].Error) > previewWindow+64 {
		t.Errorf("recorded error is %d bytes", len(raw.Tasks[0].Error))
	}
	clean := NewSanitizer(nil).Trace(raw)
	if e := clean.Tasks[0].Error; strings.Contains(e, "sk-Z") || !strings.HasSuffix(e, fmt.Sprintf("original_length=%d]", previewWindow-9+len(secret)+1<<20)) {
		t.Errorf("sanitized error = ...%s", e[max(len(e)-80, 0):])
	}
}

// The sanitizer never decodes more than MaxValueBytes of a value: a huge
// one costs about its preview.
func TestSanitizerValueCostIsBounded(t *testing.T) {
	huge := json.RawMessage(`{"items":[` + strings.Repeat(`{"k":"vvvvvvvvvvvvvvvv"},`, 1<<20) + `1]}`)
	s := NewSanitizer(nil)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	got := s.Value(huge)
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Errorf("sanitizing a %d MiB value allocated %d bytes", len(huge)>>20, n)
	}
	if !strings.HasPrefix(string(got), `{"_truncated":true,`) || !strings.Contains(string(got), fmt.Sprintf(`"original_length":%d`, len(huge))) {
		t.Errorf("got %.200s", got)
	}
}

func bigTrace(tasks, argBytes int) Trace {
	tr := Trace{TraceID: "big", WorkflowID: "wf", StartedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		Code: strings.Repeat("x", 9000), Logs: []string{strings.Repeat("l", 9000), strings.Repeat("m", 9000)},
		Decisions: []Decision{}}
	for i := range tasks {
		tr.Tasks = append(tr.Tasks, Task{
			TaskID: fmt.Sprintf("t%d", i+1), Tool: "a:b", ToolID: "a:b", Success: i%3 != 0, DurationMS: float64(i % 7),
			Args:   json.RawMessage(`{"pad":"` + strings.Repeat("p", argBytes) + `"}`),
			Result: json.RawMessage(`"` + strings.Repeat("r", argBytes) + `"`),
			Error:  strings.Repeat("e", 300),
		})
	}
	return tr
}

func jsonSize(t *testing.T, tr Trace) int {
	t.Helper()
	b, err := json.Marshal(tr)
	if err != nil {
		t.Fatal(err)
	}
	return len(b)
}

// checkConsistent checks that the kept and aggregated calls add up.
func checkConsistent(t *testing.T, tr Trace, spans int) {
	t.Helper()
	tc := tr.Truncated
	if tc == nil {
		t.Fatal("no truncation recorded")
	}
	sum := 0
	for _, a := range tc.Aggregates {
		sum += a.Calls
	}
	if tc.Spans != spans || tc.SpansAggregated != sum || len(tr.Tasks)+sum != spans || tc.HeadSpans > len(tr.Tasks) {
		t.Errorf("inconsistent: %d tasks, truncation %+v (aggregates sum %d), want %d spans", len(tr.Tasks), tc, sum, spans)
	}
}

func sameJSON(a, b Trace) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func TestBoundUnderTheCapIsUnchanged(t *testing.T) {
	tr := bigTrace(10, 100)
	if got := Bound(tr, Limits{}); !sameJSON(got, tr) {
		t.Errorf("a small trace changed")
	}
}

func TestBoundCutsToTheByteCap(t *testing.T) {
	for _, tc := range []struct {
		name            string
		tasks, argBytes int
		limit           int
		keepsAllTasks   bool
	}{
		{"payloads only", 1050, 2000, MaxTraceBytes, true},
		{"large values", 20, 200 << 10, MaxTraceBytes, true},
		{"fewer tasks", 1050, 100, 64 << 10, false},
		{"bare", 1050, 100, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := bigTrace(tc.tasks, tc.argBytes)
			size := jsonSize(t, in)
			got := Bound(in, Limits{MaxBytes: tc.limit})
			if n := jsonSize(t, got); n > tc.limit && tc.limit > 1 {
				t.Errorf("bounded trace is %d bytes, cap %d", n, tc.limit)
			}
			checkConsistent(t, got, tc.tasks)
			if got.Truncated.Bytes != size || len(got.Truncated.Dropped) == 0 {
				t.Errorf("truncation = bytes %d (want %d), dropped %v", got.Truncated.Bytes, size, got.Truncated.Dropped)
			}
			if (len(got.Tasks) == tc.tasks) != tc.keepsAllTasks {
				t.Errorf("%d of %d tasks kept", len(got.Tasks), tc.tasks)
			}
			if got.TraceID != in.TraceID || got.WorkflowID != in.WorkflowID || got.Success != in.Success {
				t.Errorf("identifiers changed")
			}
			if again := Bound(got, Limits{MaxBytes: tc.limit}); tc.limit > 1 && !sameJSON(again, got) {
				t.Errorf("Bound is not idempotent: %v then %v", got.Truncated.Dropped, again.Truncated.Dropped)
			}
			if len(in.Tasks[0].Args) != 2000+10 && tc.name == "payloads only" {
				t.Errorf("Bound modified its input")
			}
		})
	}
}

// A trace that was already folded keeps one gap: the head never reaches
// past it, the tail never before it.
func TestBoundFoldsAroundAnExistingGap(t *testing.T) {
	in := bigTrace(1000, 10)
	in.Truncated = &Truncation{Spans: 5000, SpansAggregated: 4000, HeadSpans: 10,
		Aggregates: []ToolAggregate{{Tool: "a:b", Calls: 4000, TotalMS: 4, MinMS: 0, MaxMS: 1}}}
	got := Bound(in, Limits{})
	if got.Truncated.HeadSpans != 10 || len(got.Tasks) != 10+DefaultTailSpans {
		t.Fatalf("head %d, %d tasks", got.Truncated.HeadSpans, len(got.Tasks))
	}
	if got.Tasks[10].TaskID != in.Tasks[1000-DefaultTailSpans].TaskID {
		t.Errorf("tail starts at %s", got.Tasks[10].TaskID)
	}
	checkConsistent(t, got, 5000)
}

// An untrusted trace's truncation is made consistent and bounded.
func TestBoundCleansAHostileTruncation(t *testing.T) {
	in := bigTrace(3, 10)
	in.Tasks[0].Tool = strings.Repeat("T", 5000)
	in.Truncated = &Truncation{Spans: -5, SpansAggregated: 1, HeadSpans: 99}
	for i := range 500 {
		in.Truncated.Aggregates = append(in.Truncated.Aggregates, ToolAggregate{
			Tool: fmt.Sprintf("tool%d", i), Calls: math.MaxInt, Errors: -3, TotalMS: math.Inf(1), MinMS: math.NaN()})
	}
	in.Truncated.Aggregates = append(in.Truncated.Aggregates, ToolAggregate{Tool: "neg", Calls: -7})
	got := Bound(in, Limits{})
	tc := got.Truncated
	if len(tc.Aggregates) != MaxAggregateTools+1 || tc.HeadSpans != 3 {
		t.Fatalf("%d aggregate lines, head %d", len(tc.Aggregates), tc.HeadSpans)
	}
	for _, a := range tc.Aggregates {
		if a.Errors < 0 || a.Errors > a.Calls || math.IsNaN(a.MinMS) || math.IsInf(a.TotalMS, 0) {
			t.Fatalf("line %+v", a)
		}
	}
	if len(got.Tasks[0].Tool) != maxShortField {
		t.Errorf("tool of %d bytes kept", len(got.Tasks[0].Tool))
	}
	if _, err := json.Marshal(got); err != nil {
		t.Errorf("bounded trace does not encode: %v", err)
	}
}

// The sanitizer folds a trace with more tasks than the kept head and tail
// (a client's) before doing any work on them.
func TestSanitizerFoldsSpans(t *testing.T) {
	in := bigTrace(5000, 5)
	got := NewSanitizer(nil).Trace(in)
	if len(got.Tasks) != DefaultHeadSpans+DefaultTailSpans {
		t.Fatalf("%d tasks", len(got.Tasks))
	}
	checkConsistent(t, got, 5000)
	if n := jsonSize(t, got); n > MaxTraceBytes {
		t.Errorf("%d bytes", n)
	}
}

// Only a bounded number of nested runs keep a trace, over the whole tree;
// the top-level trace counts the others.
func TestChildTraceBudget(t *testing.T) {
	root := NewRecorder(NewTraceID(), RecorderOptions{ChildTraces: 2})
	var kept []string
	var nested tools.CallFunc
	nested = func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		rec, keep := NewChildRecorder(ctx, RecorderOptions{})
		if tool == "cap:outer" {
			_, _ = rec.Wrap(nested)(ctx, "cap:inner", nil)
		}
		if keep {
			kept = append(kept, tool)
		}
		return nil, nil
	}
	call := root.Wrap(nested)
	for range 3 {
		_, _ = call(context.Background(), "cap:outer", nil)
	}
	tr := root.Finish(Trace{}, nil)
	// First outer kept (its inner too: budget spent); second outer not
	// kept (its inner is not either); third outer not kept.
	if !reflect.DeepEqual(kept, []string{"cap:inner", "cap:outer"}) {
		t.Errorf("kept %v", kept)
	}
	if tr.Tasks[0].ChildTraceID == "" || tr.Tasks[1].ChildTraceID != "" || tr.Tasks[2].ChildTraceID != "" {
		t.Errorf("child ids %q %q %q", tr.Tasks[0].ChildTraceID, tr.Tasks[1].ChildTraceID, tr.Tasks[2].ChildTraceID)
	}
	if tr.Truncated == nil || tr.Truncated.ChildTracesOmitted != 4 || tr.Truncated.SpansAggregated != 0 {
		t.Errorf("truncation = %+v", tr.Truncated)
	}
}

// A recorder given the sanitizer returns what sanitizing its raw trace
// gives, though it sanitized its head calls while they ran.
func TestRecorderSanitizesAsItRecords(t *testing.T) {
	s := NewSanitizer([]string{"hunter2-secret"})
	run := func(opts RecorderOptions) Trace {
		opts.Now = (&fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), step: time.Millisecond}).Now
		opts.HeadSpans, opts.TailSpans = 3, 2
		rec := NewRecorder("tr", opts)
		call := rec.Wrap(func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
			if tool == "x:fail" {
				return nil, errors.New("denied for bob@example.com with hunter2-secret")
			}
			return json.RawMessage(`{"token":"abc123456789","mail":"carol@example.com"}`), nil
		})
		for i := range 8 {
			tool := "x:ok"
			if i%3 == 1 {
				tool = "x:fail"
			}
			_, _ = call(tools.WithCallSeq(context.Background(), i), tool, json.RawMessage(`{"password":"hunter2-secret","n":`+itoa(i)+`}`))
		}
		return rec.Finish(Trace{Code: `mcp.x.ok({password: "hunter2-secret"})`, Logs: []string{"sent to dave@example.com"}}, nil)
	}
	got := run(RecorderOptions{Sanitizer: s})
	want := s.Trace(run(RecorderOptions{}))
	if !sameJSON(got, want) {
		a, _ := json.Marshal(got)
		b, _ := json.Marshal(want)
		t.Errorf("recorder with sanitizer:\n%s\nsanitized afterwards:\n%s", a, b)
	}
	b, _ := json.Marshal(got)
	for _, leak := range []string{"hunter2", "example.com", "abc123456789"} {
		if strings.Contains(string(b), leak) {
			t.Errorf("trace holds %q: %s", leak, b)
		}
	}
}

// The cheap size bound never underestimates, whatever the text holds.
func TestSizeAtMostIsAnUpperBound(t *testing.T) {
	nasty := strings.Repeat("<>&\"\\\x01é\u2028", 50)
	tr := bigTrace(30, 100)
	tr.Error, tr.Code, tr.Logs = nasty, nasty, []string{nasty, ""}
	tr.DAG = json.RawMessage(`{"x":"` + strings.Repeat("<&>", 100) + `"}`)
	tr.Decisions = []Decision{{NodeID: nasty, Condition: nasty, Outcome: nasty}}
	tr.Truncated = &Truncation{Spans: 40, SpansAggregated: 10, HeadSpans: 30, Dropped: []string{nasty},
		Aggregates: []ToolAggregate{{Tool: nasty, Calls: math.MaxInt32, TotalMS: 1e300, MinMS: 1e-300, MaxMS: 123456.789}}}
	for i := range tr.Tasks {
		tr.Tasks[i].Args = json.RawMessage(`{"a":"` + strings.Repeat("<", 200) + `"}`)
		tr.Tasks[i].Error = nasty
		tr.Tasks[i].DurationMS = 1e300
		tr.Tasks[i].Layer = math.MaxInt
	}
	if got, bound := jsonSize(t, tr), sizeAtMost(tr); got > bound {
		t.Errorf("JSON is %d bytes, bound says at most %d", got, bound)
	}
}
