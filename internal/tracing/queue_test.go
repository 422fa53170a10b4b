package tracing

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

func mustOpen(t *testing.T, dir string, max int) *Queue {
	t.Helper()
	q, err := OpenQueue(dir, max)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func mustPush(t *testing.T, q *Queue, traces ...Trace) {
	t.Helper()
	for _, tr := range traces {
		if err := q.Push(tr); err != nil {
			t.Fatal(err)
		}
	}
}

func ids(traces []Trace) []string { return traceIDs(traces) }

func trace(id, parent string) Trace {
	return Trace{TraceID: id, ParentTraceID: parent, WorkflowID: "wf-" + id, Tasks: []Task{}, Decisions: []Decision{}}
}

func TestQueueSurvivesCrash(t *testing.T) {
	dir := t.TempDir()
	q := mustOpen(t, dir, 100)
	full := trace("a", "")
	full.StartedAt = time.Date(2026, 5, 1, 2, 3, 4, 5, time.UTC)
	full.Tasks = []Task{{TaskID: "t1", ToolID: "fs:read", Args: json.RawMessage(`{"path":"/x"}`), Success: true}}
	mustPush(t, q, full, trace("b", ""), trace("c", ""))
	// No Close: the process "crashes" here, and the ack of b was never sent.
	q = nil

	// Leftovers of a crash mid-write: a stale temp file, a fresh one (another
	// process writing right now), and a garbled file.
	stale := filepath.Join(dir, "123.tmp")
	fresh := filepath.Join(dir, "456.tmp")
	for _, p := range []string{stale, fresh} {
		if err := os.WriteFile(p, []byte("{"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	garbled := filepath.Join(dir, "00000000000000000050-ffffffff.json")
	if err := os.WriteFile(garbled, []byte(`{"trace_id":`), 0o600); err != nil {
		t.Fatal(err)
	}

	q2 := mustOpen(t, dir, 100)
	if q2.Len() != 3 || q2.Dropped() != 1 {
		t.Fatalf("after reopen: len %d dropped %d", q2.Len(), q2.Dropped())
	}
	got, err := q2.Peek(10)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ids(got), []string{"a", "b", "c"}) {
		t.Fatalf("order = %v", ids(got))
	}
	if !reflect.DeepEqual(got[0], full) {
		t.Errorf("trace changed on disk:\n got  %+v\n want %+v", got[0], full)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale temp file kept")
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("fresh temp file removed: %v", err)
	}
	if _, err := os.Stat(garbled + ".corrupt"); err != nil {
		t.Errorf("garbled file not quarantined: %v", err)
	}

	// New pushes sort after what was loaded.
	mustPush(t, q2, trace("d", ""))
	if err := q2.Ack([]string{"a", "c", "unknown"}); err != nil {
		t.Fatal(err)
	}
	q3 := mustOpen(t, dir, 100)
	got, _ = q3.Peek(10)
	if !reflect.DeepEqual(ids(got), []string{"b", "d"}) {
		t.Errorf("after ack and reopen: %v", ids(got))
	}
}

func TestQueueBoundDropsOldest(t *testing.T) {
	dir := t.TempDir()
	q := mustOpen(t, dir, 3)
	for _, id := range []string{"1", "2", "3", "4", "5"} {
		mustPush(t, q, trace(id, ""))
	}
	got, _ := q.Peek(10)
	if q.Len() != 3 || q.Dropped() != 2 || !reflect.DeepEqual(ids(got), []string{"3", "4", "5"}) {
		t.Fatalf("len %d dropped %d ids %v", q.Len(), q.Dropped(), ids(got))
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) != 3 {
		t.Errorf("%d files on disk, want 3", len(files))
	}
	// Reopening with a smaller bound trims too.
	q2 := mustOpen(t, dir, 2)
	got, _ = q2.Peek(10)
	if q2.Dropped() != 1 || !reflect.DeepEqual(ids(got), []string{"4", "5"}) {
		t.Errorf("smaller bound: dropped %d ids %v", q2.Dropped(), ids(got))
	}
}

func TestQueueParentsBeforeChildren(t *testing.T) {
	q := mustOpen(t, t.TempDir(), 100)
	// Nested runs finish first: grandchild, child, an unrelated run, then the
	// parent; "orphan" has a parent that is not queued (already sent).
	mustPush(t, q,
		trace("grandchild", "child"),
		trace("child", "parent"),
		trace("other", ""),
		trace("orphan", "gone"),
		trace("parent", ""),
		trace("sibling", "parent"),
	)
	got, _ := q.Peek(10)
	want := []string{"other", "orphan", "parent", "child", "grandchild", "sibling"}
	if !reflect.DeepEqual(ids(got), want) {
		t.Errorf("order = %v, want %v", ids(got), want)
	}
	got, _ = q.Peek(2)
	if !reflect.DeepEqual(ids(got), want[:2]) {
		t.Errorf("Peek(2) = %v", ids(got))
	}
}

func TestQueueParentCycleDoesNotHang(t *testing.T) {
	q := mustOpen(t, t.TempDir(), 100)
	mustPush(t, q, trace("a", "b"), trace("b", "a"), trace("self", "self"))
	got, _ := q.Peek(10)
	if len(got) != 3 {
		t.Errorf("got %v", ids(got))
	}
}

func TestQueueSharedDirectory(t *testing.T) {
	dir := t.TempDir()
	q1, q2 := mustOpen(t, dir, 100), mustOpen(t, dir, 100)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q := q1
			if i%2 == 1 {
				q = q2
			}
			if err := q.Push(trace("id"+itoa(i), "")); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if q1.Len() != 10 || q2.Len() != 10 {
		t.Fatalf("lens %d %d", q1.Len(), q2.Len())
	}
	// A process that starts later finds all of them; one acked by another
	// process meanwhile is skipped, not reported corrupt.
	q3 := mustOpen(t, dir, 100)
	if err := q1.Ack([]string{"id0"}); err != nil {
		t.Fatal(err)
	}
	got, err := q3.Peek(100)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 19 || q3.Dropped() != 0 || q3.Len() != 19 {
		t.Errorf("third process: %d traces, dropped %d, len %d", len(got), q3.Dropped(), q3.Len())
	}
	for _, tr := range got {
		if tr.TraceID == "id0" || !strings.HasPrefix(tr.TraceID, "id") {
			t.Errorf("unexpected %q", tr.TraceID)
		}
	}
}

func TestQueueDiscardCounts(t *testing.T) {
	q := mustOpen(t, t.TempDir(), 10)
	mustPush(t, q, trace("a", ""), trace("b", ""))
	if err := q.Discard([]string{"a"}); err != nil {
		t.Fatal(err)
	}
	if q.Len() != 1 || q.Dropped() != 1 {
		t.Errorf("len %d dropped %d", q.Len(), q.Dropped())
	}
}
