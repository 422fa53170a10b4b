package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/store"
)

func runRetention(t *testing.T, open func(t *testing.T) store.Store) {
	subtests(t, open, map[string]func(t *testing.T, s store.Store){
		"ByAge":               testPruneByAge,
		"ByCountPerScope":     testPruneByCount,
		"OnlyNamedScopes":     testPruneNamedScopes,
		"BoundedPerCall":      testPruneLimit,
		"NothingToDo":         testPruneNothing,
		"AgeAndCountInOne":    testPruneAgeAndCount,
		"IdenticalStartsByID": testPruneTiesByID,
		"CountByReceived":     testPruneByReceived,
		"FutureFlood":         testPruneFutureFlood,
	})
}

// ids lists the IDs of sc's traces, newest first.
func traceIDsOf(t *testing.T, s store.Store, sc store.Scope) []string {
	t.Helper()
	list, _ := must2(s.ListTraces(t.Context(), store.TraceFilter{Scope: sc})).of(t)
	out := make([]string, len(list))
	for i, tr := range list {
		out[i] = tr.ID
	}
	return out
}

func putN(t *testing.T, s store.Store, sc store.Scope, prefix string, n int, step time.Duration) {
	t.Helper()
	var batch []store.Trace
	for i := range n {
		batch = append(batch, trace(sc, fmt.Sprintf("%s%02d", prefix, i), time.Duration(i)*step))
	}
	noErr(t, put(t.Context(), s, batch))
}

// The count limit keeps the newest traces the gateway received, whatever
// start they claim: traces started in the near future (inside the clock
// skew) but received first go before real ones received later.
func testPruneByReceived(t *testing.T, s store.Store) {
	now := time.Now().UTC()
	var early []store.Trace
	for i := range 5 {
		tr := trace(acmeWeb, fmt.Sprintf("f%02d", i), 0)
		tr.StartedAt = now.Add(store.MaxClockSkew - time.Minute)
		tr.ReceivedAt = now.Add(-time.Hour)
		early = append(early, tr)
	}
	noErr(t, put(t.Context(), s, early))
	var real []store.Trace
	for i := range 3 {
		tr := trace(acmeWeb, fmt.Sprintf("r%02d", i), 0)
		tr.StartedAt = now.Add(-2 * time.Hour)
		real = append(real, tr)
	}
	noErr(t, put(t.Context(), s, real))
	if n := must(s.PruneTraces(t.Context(), store.TraceRetention{Keep: 3})).of(t); n != 5 {
		t.Errorf("deleted %d, want the 5 received first", n)
	}
	sameStrings(t, "left", traceIDsOf(t, s, acmeWeb), []string{"r02", "r01", "r00"})
}

// Issue 29's flood: 10,100 traces started in 2036 are refused, batch by
// batch, so a retention pass keeping 10,000 leaves every real trace, and
// no rollup of a future minute appears.
func testPruneFutureFlood(t *testing.T, s store.Store) {
	now := time.Now().UTC()
	var real []store.Trace
	for i := range 20 {
		tr := trace(acmeWeb, fmt.Sprintf("r%02d", i), 0)
		tr.StartedAt = now.Add(-time.Duration(i) * time.Minute)
		tr.Stats = &store.TraceStats{DurationMS: 1, Tools: []store.ToolStat{{Tool: "math:add", Calls: 1}}}
		real = append(real, tr)
	}
	noErr(t, put(t.Context(), s, real))
	future := time.Date(2036, 1, 1, 0, 0, 0, 0, time.UTC)
	for b := range 101 {
		batch := make([]store.Trace, 100)
		for i := range batch {
			tr := trace(acmeWeb, fmt.Sprintf("future-%03d-%02d", b, i), 0)
			tr.StartedAt = future.Add(time.Duration(b*100+i) * time.Second)
			tr.Stats = &store.TraceStats{DurationMS: 1, ErrorCode: "TOOL_ERROR"}
			batch[i] = tr
		}
		if err := put(t.Context(), s, batch); !errors.Is(err, store.ErrInvalid) {
			t.Fatalf("batch %d of future traces: err = %v, want ErrInvalid", b, err)
		}
	}
	// A start inside the skew is taken.
	near := trace(acmeWeb, "near", 0)
	near.StartedAt = now.Add(store.MaxClockSkew - time.Minute)
	noErr(t, put(t.Context(), s, []store.Trace{near}))

	must(s.PruneTraces(t.Context(), store.TraceRetention{Keep: 10_000, Before: now.Add(-30 * 24 * time.Hour)})).of(t)
	if got := traceIDsOf(t, s, acmeWeb); len(got) != 21 {
		t.Errorf("%d traces left, want the 20 real ones and the near one", len(got))
	}
	d := must(s.Dashboard(t.Context(), acmeWeb, now.Add(-time.Hour))).of(t)
	var executions int64
	for _, m := range d.Minutes {
		if m.Minute.After(now.Add(store.MaxClockSkew)) {
			t.Errorf("a rollup of a future minute: %+v", m)
		}
		executions += m.Executions
	}
	if executions != 20 || len(d.Errors) != 0 {
		t.Errorf("dashboard: %d executions, errors %v; want the 20 real ones only", executions, d.Errors)
	}
}

func testPruneByAge(t *testing.T, s store.Store) {
	putN(t, s, acmeWeb, "w", 4, time.Hour) // t0, +1h, +2h, +3h
	putN(t, s, globex, "g", 2, time.Hour)
	n := must(s.PruneTraces(t.Context(), store.TraceRetention{Before: t0.Add(90 * time.Minute)})).of(t)
	if n != 4 {
		t.Errorf("deleted %d, want 4 (two per scope)", n)
	}
	sameStrings(t, "acme left", traceIDsOf(t, s, acmeWeb), []string{"w03", "w02"})
	sameStrings(t, "globex left", traceIDsOf(t, s, globex), []string{})
	// Before is exclusive: a trace started exactly then stays.
	must(s.PruneTraces(t.Context(), store.TraceRetention{Before: t0.Add(2 * time.Hour)})).of(t)
	sameStrings(t, "at the boundary", traceIDsOf(t, s, acmeWeb), []string{"w03", "w02"})
}

func testPruneByCount(t *testing.T, s store.Store) {
	putN(t, s, acmeWeb, "w", 7, time.Minute)
	putN(t, s, acmeAPI, "a", 2, time.Minute)
	n := must(s.PruneTraces(t.Context(), store.TraceRetention{Keep: 3})).of(t)
	if n != 4 {
		t.Errorf("deleted %d, want 4", n)
	}
	sameStrings(t, "acme/web keeps its newest", traceIDsOf(t, s, acmeWeb), []string{"w06", "w05", "w04"})
	sameStrings(t, "acme/api under the limit", traceIDsOf(t, s, acmeAPI), []string{"a01", "a00"})
	// A second pass has nothing to do.
	if n := must(s.PruneTraces(t.Context(), store.TraceRetention{Keep: 3})).of(t); n != 0 {
		t.Errorf("second pass deleted %d", n)
	}
}

func testPruneNamedScopes(t *testing.T, s store.Store) {
	putN(t, s, acmeWeb, "w", 5, time.Minute)
	putN(t, s, globex, "g", 5, time.Minute)
	n := must(s.PruneTraces(t.Context(), store.TraceRetention{Keep: 2, Scopes: []store.Scope{globex}})).of(t)
	if n != 3 {
		t.Errorf("deleted %d, want 3", n)
	}
	if got := traceIDsOf(t, s, acmeWeb); len(got) != 5 {
		t.Errorf("a scope not named was pruned: %v", got)
	}
	sameStrings(t, "globex", traceIDsOf(t, s, globex), []string{"g04", "g03"})
}

func testPruneLimit(t *testing.T, s store.Store) {
	putN(t, s, acmeWeb, "w", 25, time.Second)
	var got []int
	for range 5 {
		got = append(got, must(s.PruneTraces(t.Context(), store.TraceRetention{Before: t0.Add(time.Hour), Limit: 10})).of(t))
	}
	if fmt.Sprint(got) != "[10 10 5 0 0]" {
		t.Errorf("deleted per call %v, want [10 10 5 0 0]", got)
	}
	putN(t, s, acmeWeb, "x", 25, time.Second)
	got = nil
	for range 4 {
		got = append(got, must(s.PruneTraces(t.Context(), store.TraceRetention{Keep: 5, Limit: 8})).of(t))
	}
	if fmt.Sprint(got) != "[8 8 4 0]" {
		t.Errorf("deleted per call %v, want [8 8 4 0]", got)
	}
}

func testPruneNothing(t *testing.T, s store.Store) {
	if n := must(s.PruneTraces(t.Context(), store.TraceRetention{Before: t0, Keep: 1})).of(t); n != 0 {
		t.Errorf("empty store: deleted %d", n)
	}
	putN(t, s, acmeWeb, "w", 3, time.Second)
	if n := must(s.PruneTraces(t.Context(), store.TraceRetention{})).of(t); n != 0 {
		t.Errorf("no limits: deleted %d", n)
	}
}

func testPruneAgeAndCount(t *testing.T, s store.Store) {
	putN(t, s, acmeWeb, "w", 10, time.Minute)
	n := must(s.PruneTraces(t.Context(), store.TraceRetention{Before: t0.Add(2 * time.Minute), Keep: 4})).of(t)
	if n != 6 {
		t.Errorf("deleted %d, want 6 (2 by age, 4 by count)", n)
	}
	sameStrings(t, "left", traceIDsOf(t, s, acmeWeb), []string{"w09", "w08", "w07", "w06"})
}

// Traces started at the same instant are ordered by ID, as the list is:
// the pass keeps exactly what the first page shows.
func testPruneTiesByID(t *testing.T, s store.Store) {
	var batch []store.Trace
	for _, id := range []string{"c", "a", "e", "b", "d"} {
		batch = append(batch, trace(acmeWeb, id, 0))
	}
	noErr(t, put(t.Context(), s, batch))
	must(s.PruneTraces(t.Context(), store.TraceRetention{Keep: 2})).of(t)
	sameStrings(t, "left", traceIDsOf(t, s, acmeWeb), []string{"e", "d"})
}
