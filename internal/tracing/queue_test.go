package tracing

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
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

// crash ends q as a killed process would: the log stays as it is and the
// lock is released.
func crash(q *Queue) {
	q.f.Close()
	q.unlock()
}

func TestQueueSurvivesCrash(t *testing.T) {
	dir := t.TempDir()
	q := mustOpen(t, dir, 100)
	full := trace("a", "")
	full.StartedAt = time.Date(2026, 5, 1, 2, 3, 4, 5, time.UTC)
	full.Tasks = []Task{{TaskID: "t1", ToolID: "fs:read", Args: json.RawMessage(`{"path":"/x"}`), Success: true}}
	mustPush(t, q, full, trace("b", ""), trace("c", ""), trace("x", ""))
	if err := q.Ack([]string{"x"}); err != nil {
		t.Fatal(err)
	}
	// The process dies in the middle of appending a trace.
	if _, err := q.f.Write([]byte(`+ 1 {"trace_id":"torn","ta`)); err != nil {
		t.Fatal(err)
	}
	crash(q)

	// Leftovers: a stale temp file, a fresh one (another process writing
	// right now), and a garbled trace file of the first, file-per-trace
	// design next to a good one.
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
	legacy := filepath.Join(dir, "00000000000000000051-ffffffff.json")
	if err := os.WriteFile(legacy, []byte(`{"trace_id": "legacy", "workflow_id": "wf-legacy", "tasks": [], "decisions": []}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(legacy, time.Now(), time.Now()); err != nil {
		t.Fatal(err)
	}

	q2 := mustOpen(t, dir, 100)
	if q2.Len() != 4 || q2.Dropped() != 2 { // the torn line and the garbled file
		t.Fatalf("after reopen: len %d dropped %d", q2.Len(), q2.Dropped())
	}
	got, err := q2.Peek(10)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ids(got), []string{"a", "b", "c", "legacy"}) {
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
	if logs, _ := filepath.Glob(filepath.Join(dir, "*.log")); len(logs) != 1 {
		t.Errorf("logs after adoption: %v; want only the new process's", logs)
	}
	if _, err := os.Stat(legacy); !os.IsNotExist(err) {
		t.Errorf("adopted trace file kept")
	}

	// New pushes sort after what was loaded.
	mustPush(t, q2, trace("d", ""))
	if err := q2.Ack([]string{"a", "c", "unknown"}); err != nil {
		t.Fatal(err)
	}
	crash(q2)
	q3 := mustOpen(t, dir, 100)
	got, _ = q3.Peek(10)
	if !reflect.DeepEqual(ids(got), []string{"b", "legacy", "d"}) {
		t.Errorf("after ack and reopen: %v", ids(got))
	}
}

func TestQueueCloseKeepsOnlyWhatIsQueued(t *testing.T) {
	dir := t.TempDir()
	q := mustOpen(t, dir, 100)
	mustPush(t, q, trace("a", ""))
	if err := q.Ack([]string{"a"}); err != nil {
		t.Fatal(err)
	}
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	if files, _ := os.ReadDir(dir); len(files) != 0 {
		t.Errorf("an empty queue left %d files", len(files))
	}
	if err := q.Push(trace("late", "")); err == nil {
		t.Error("Push after Close succeeded")
	}
	q = mustOpen(t, dir, 100)
	mustPush(t, q, trace("b", ""))
	q.Close()
	q = mustOpen(t, dir, 100)
	if got, _ := q.Peek(10); !reflect.DeepEqual(ids(got), []string{"b"}) {
		t.Errorf("after a clean close and reopen: %v", ids(got))
	}
}

func TestQueueLogIsCompacted(t *testing.T) {
	dir := t.TempDir()
	q := mustOpen(t, dir, 100_000)
	big := trace("keep", "")
	big.Code = strings.Repeat("x", 4<<10)
	mustPush(t, q, big)
	for i := range 600 { // about 2.5 MiB of traces delivered one by one
		tr := big
		tr.TraceID = "t" + itoa(i)
		mustPush(t, q, tr)
		if err := q.Ack([]string{tr.TraceID}); err != nil {
			t.Fatal(err)
		}
	}
	if q.size > 2*compactMin {
		t.Errorf("log holds %d bytes for one queued trace", q.size)
	}
	crash(q)
	q = mustOpen(t, dir, 100)
	if got, err := q.Peek(10); err != nil || !reflect.DeepEqual(ids(got), []string{"keep"}) {
		t.Errorf("after compaction and reopen: %v, %v", ids(got), err)
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
	// Reopening with a smaller bound trims too.
	crash(q)
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
	// A process that starts while both run leaves their traces to them.
	q3 := mustOpen(t, dir, 100)
	if q3.Len() != 0 {
		t.Errorf("third process took %d traces of live processes", q3.Len())
	}
	// Once the first ends, the next process to start sends the rest of its.
	if err := q1.Ack([]string{"id0"}); err != nil {
		t.Fatal(err)
	}
	crash(q1)
	q4 := mustOpen(t, dir, 100)
	got, err := q4.Peek(100)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 9 || q4.Dropped() != 0 || q2.Len() != 10 || q3.Len() != 0 {
		t.Errorf("fourth process: %d traces, dropped %d; second %d, third %d", len(got), q4.Dropped(), q2.Len(), q3.Len())
	}
	for _, tr := range got {
		if n, _ := strconv.Atoi(strings.TrimPrefix(tr.TraceID, "id")); tr.TraceID == "id0" || n%2 != 0 {
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

// The traces a process pushed are peeked from memory, not read back from the
// log and decoded: the log can change underneath and Peek still returns them,
// with the length of the JSON the log holds for each.
func TestQueuePeeksItsOwnTracesFromMemory(t *testing.T) {
	q := mustOpen(t, t.TempDir(), 100)
	defer q.Close()
	a := trace("a", "")
	a.Tasks = []Task{{TaskID: "t1", ToolID: "fs:read", Args: json.RawMessage(`{"path":"/x"}`), Success: true}}
	mustPush(t, q, a, trace("b", ""))
	if err := q.f.Truncate(0); err != nil {
		t.Fatal(err)
	}
	got, sizes, err := q.peek(10)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, []Trace{a, trace("b", "")}) {
		t.Errorf("peek = %+v", got)
	}
	for i, tr := range got {
		if n, _ := jsonLen(tr); sizes[i] != n {
			t.Errorf("trace %s: size %d, want its JSON's %d", tr.TraceID, sizes[i], n)
		}
	}
}

// What the queue holds in memory is bounded (maxHeld): past it, traces are
// read back from the log, and what is removed is released.
func TestQueueHoldsBoundedMemory(t *testing.T) {
	dir := t.TempDir()
	q := mustOpen(t, dir, 100)
	defer q.Close()
	big := strings.Repeat("x", maxHeld/4)
	var pushed []string
	for i := range 6 {
		tr := trace("t"+strconv.Itoa(i), "")
		tr.Code = big
		mustPush(t, q, tr)
		pushed = append(pushed, tr.TraceID)
	}
	if q.held > maxHeld {
		t.Errorf("held %d bytes, over %d", q.held, maxHeld)
	}
	got, sizes, err := q.peek(10)
	if err != nil || !reflect.DeepEqual(ids(got), pushed) {
		t.Fatalf("peek = %v, %v", ids(got), err)
	}
	if sizes[0] < 0 || sizes[len(sizes)-1] != -1 {
		t.Errorf("sizes %v: want the first held, the last read from the log", sizes)
	}
	if got[len(got)-1].Code != big {
		t.Error("a trace read back from the log lost its code")
	}
	if err := q.Ack(pushed[:2]); err != nil {
		t.Fatal(err)
	}
	held := q.held
	if err := q.Ack(pushed[2:]); err != nil {
		t.Fatal(err)
	}
	if held <= 0 || q.held != 0 {
		t.Errorf("held %d after the first two were delivered, %d after all: want some, then none", held, q.held)
	}
}
