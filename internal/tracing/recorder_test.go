package tracing

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/tools"
)

// fakeClock advances by step on every reading, so durations are exact.
type fakeClock struct {
	mu   sync.Mutex
	now  time.Time
	step time.Duration
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.now
	c.now = c.now.Add(c.step)
	return t
}

func TestRecorderRecordsCallsInIssueOrder(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), step: 10 * time.Millisecond}
	rec := NewRecorder("trace-1", RecorderOptions{
		Now:       clock.Now,
		LayerOf:   func(tool string, seq int) int { return seq / 2 },
		RoutingOf: func(tool string) string { return map[string]string{"fs:read": "client"}[tool] },
		FQDNOf: func(tool string) string {
			if tool == "fs:read" {
				return "acme.web.fs.read.ab12"
			}
			return ""
		},
	})
	release := make(chan struct{})
	slowEntered := make(chan struct{})
	call := rec.Wrap(func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		if got := TraceIDFrom(ctx); got != "trace-1" {
			t.Errorf("TraceIDFrom in call = %q", got)
		}
		switch tool {
		case "json:fail":
			return nil, pmlerr.New(pmlerr.ToolError, "bad input")
		case "fs:slow":
			close(slowEntered)
			<-release
		}
		return json.RawMessage(`{"ok":true}`), nil
	})

	// Issue order 0..3 is stamped by the sandbox; the calls reach the bridge
	// in reverse order, one after the other.
	toolsBySeq := []string{"fs:read", "json:fail", "fs:slow", "json:parse"}
	slowDone := make(chan struct{})
	for seq := len(toolsBySeq) - 1; seq >= 0; seq-- {
		ctx := tools.WithCallSeq(context.Background(), seq)
		args := json.RawMessage(`{"seq":` + itoa(seq) + `}`)
		if toolsBySeq[seq] == "fs:slow" {
			go func() {
				defer close(slowDone)
				_, _ = call(ctx, toolsBySeq[seq], args)
			}()
			<-slowEntered
			continue
		}
		_, _ = call(ctx, toolsBySeq[seq], args)
	}

	// fs:slow is still running when the run ends.
	tr := rec.Finish(Trace{WorkflowID: "wf", Code: "return 1"}, pmlerr.New(pmlerr.ExecutionTimeout, "took too long"))
	close(release)
	<-slowDone

	if tr.TraceID != "trace-1" || tr.WorkflowID != "wf" || tr.Code != "return 1" {
		t.Errorf("meta not kept: %+v", tr)
	}
	if tr.Success || tr.ErrorCode != "EXECUTION_TIMEOUT" || tr.Error != "took too long" {
		t.Errorf("outcome = %v %q %q", tr.Success, tr.ErrorCode, tr.Error)
	}
	if len(tr.Tasks) != 4 {
		t.Fatalf("tasks = %d, want 4", len(tr.Tasks))
	}
	for i, task := range tr.Tasks {
		if task.TaskID != "t"+itoa(i+1) || task.ToolID != toolsBySeq[i] || string(task.Args) != `{"seq":`+itoa(i)+`}` {
			t.Errorf("task %d = %s %s %s", i, task.TaskID, task.ToolID, task.Args)
		}
		if task.Layer != i/2 {
			t.Errorf("task %d layer = %d", i, task.Layer)
		}
		if task.DurationMS <= 0 {
			t.Errorf("task %d duration = %v", i, task.DurationMS)
		}
	}
	if tr.Tasks[0].Tool != "acme.web.fs.read.ab12" || tr.Tasks[0].Routing != "client" || tr.Tasks[1].Tool != "json:fail" {
		t.Errorf("fqdn/routing: %+v", tr.Tasks[:2])
	}
	if !tr.Tasks[0].Success || string(tr.Tasks[0].Result) != `{"ok":true}` {
		t.Errorf("t1 = %+v", tr.Tasks[0])
	}
	if tr.Tasks[1].Success || tr.Tasks[1].Error != "bad input" || tr.Tasks[1].Result != nil {
		t.Errorf("t2 = %+v", tr.Tasks[1])
	}
	if tr.Tasks[2].Success || tr.Tasks[2].Error != unfinishedError {
		t.Errorf("in-flight t3 = %+v", tr.Tasks[2])
	}
	wantTools := []string{"fs:read", "json:fail", "fs:slow", "json:parse"}
	if len(tr.ToolsUsed) != 4 || tr.ToolsUsed[2] != wantTools[2] {
		t.Errorf("tools_used = %v", tr.ToolsUsed)
	}
	if tr.Decisions == nil {
		t.Errorf("decisions must encode as [] not null")
	}
	// Finish after every call returned sees t3 completed; the first
	// snapshot is unchanged.
	if again := rec.Finish(Trace{}, nil); !again.Success || !again.Tasks[2].Success {
		t.Errorf("second Finish = %+v", again.Tasks[2])
	}
	if tr.Tasks[2].Success {
		t.Errorf("late completion changed an earlier snapshot")
	}
}

func TestRecorderWithoutSeqAndDuplicateSeq(t *testing.T) {
	rec := NewRecorder(NewTraceID(), RecorderOptions{})
	call := rec.Wrap(func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`1`), nil
	})
	ctx := tools.WithCallSeq(context.Background(), 0)
	for range 3 {
		// The same inherited seq three times must not produce duplicate ids.
		if _, err := call(ctx, "a:b", nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := call(context.Background(), "c:d", json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
	tr := rec.Finish(Trace{}, nil)
	var ids []string
	for _, task := range tr.Tasks {
		ids = append(ids, task.TaskID)
	}
	if want := []string{"t1", "t2", "t3", "t4"}; !slices.Equal(ids, want) {
		t.Errorf("ids = %v", ids)
	}
	if string(tr.Tasks[0].Args) != "{}" {
		t.Errorf("nil args recorded as %q, want {}", tr.Tasks[0].Args)
	}
	if !tr.Success || tr.ErrorCode != "" {
		t.Errorf("success trace = %+v", tr)
	}
	if len(tr.ToolsUsed) != 2 {
		t.Errorf("tools_used = %v", tr.ToolsUsed)
	}
}

func TestRecorderChildTrace(t *testing.T) {
	parent := NewRecorder(NewTraceID(), RecorderOptions{})
	var child Trace
	// A capability call runs nested code with its own recorder.
	call := parent.Wrap(func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		childRec := NewRecorder(NewTraceID(), RecorderOptions{})
		NoteChildTrace(ctx, childRec.TraceID())
		inner := childRec.Wrap(func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
			if TraceIDFrom(ctx) != childRec.TraceID() {
				t.Errorf("inner call sees trace %q", TraceIDFrom(ctx))
			}
			return json.RawMessage(`"x"`), nil
		})
		if _, err := inner(ctx, "fs:read", nil); err != nil {
			return nil, err
		}
		child = childRec.Finish(Trace{ParentTraceID: TraceIDFrom(ctx)}, nil)
		return json.RawMessage(`"done"`), nil
	})
	if _, err := call(context.Background(), "acme:cap", nil); err != nil {
		t.Fatal(err)
	}
	tr := parent.Finish(Trace{}, nil)
	if child.ParentTraceID != tr.TraceID {
		t.Errorf("child parent = %q, want %q", child.ParentTraceID, tr.TraceID)
	}
	if tr.Tasks[0].ChildTraceID != child.TraceID || child.TraceID == "" {
		t.Errorf("parent task child = %q, want %q", tr.Tasks[0].ChildTraceID, child.TraceID)
	}
}

func TestRecorderPlainErrorIsInternal(t *testing.T) {
	rec := NewRecorder("x", RecorderOptions{})
	tr := rec.Finish(Trace{}, errors.New("boom"))
	if tr.ErrorCode != string(pmlerr.Internal) || tr.Error != "boom" {
		t.Errorf("got %q %q", tr.ErrorCode, tr.Error)
	}
}

func TestTraceJSONShape(t *testing.T) {
	tr := NewRecorder("abc", RecorderOptions{}).Finish(Trace{WorkflowID: "w"}, nil)
	b, err := json.Marshal(tr)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"trace_id", "workflow_id", "executed_locally", "success", "duration_ms", "started_at", "tasks", "decisions"} {
		if _, ok := m[k]; !ok {
			t.Errorf("missing %q in %s", k, b)
		}
	}
	for _, k := range []string{"parent_trace_id", "error_code", "error", "dag", "code"} {
		if _, ok := m[k]; ok {
			t.Errorf("empty %q not omitted in %s", k, b)
		}
	}
}
