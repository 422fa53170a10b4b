package tracing

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/tools"
)

// RecorderOptions tune what a Recorder writes into each task. Every field is
// optional.
type RecorderOptions struct {
	// Now is the clock (time.Now by default); tests inject a fake one.
	Now func() time.Time
	// LayerOf gives the DAG layer of the seq-th call (0-based issue order) to
	// tool; 0 when nil.
	LayerOf func(tool string, seq int) int
	// RoutingOf gives "client" or "server" for tool; empty when nil.
	RoutingOf func(tool string) string
	// FQDNOf gives tool's registry FQDN; when nil or empty Task.Tool is the id.
	FQDNOf func(tool string) string
}

// unfinishedError is the task error of a call still running when the trace
// was finished (the run timed out or threw while the call was in flight).
const unfinishedError = "unfinished: the run ended before the call returned"

// Recorder captures every mcp.* call of one run. It is safe for concurrent use:
// the sandbox issues calls from several goroutines at once.
type Recorder struct {
	traceID string
	opts    RecorderOptions
	start   time.Time

	mu    sync.Mutex
	calls []*call
	used  map[int]bool // ordinals taken
	next  int          // first ordinal after every one taken
}

type call struct {
	ordinal int
	started time.Time
	task    Task
	done    bool
	child   *childSlot
}

// NewRecorder starts recording the run traceID; the run's start time is now.
func NewRecorder(traceID string, opts RecorderOptions) *Recorder {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Recorder{traceID: traceID, opts: opts, start: opts.Now(), used: map[int]bool{}}
}

// TraceID returns the id of the trace being recorded.
func (r *Recorder) TraceID() string { return r.traceID }

// Wrap returns next with recording around it. Task ids are t1, t2, ... in the
// order the code issued its calls: the sandbox's sequence number
// (tools.CallSeq) when the context carries one, which stays deterministic when
// concurrent calls reach the bridge in any order, else arrival order. The call's
// context carries this trace's id (TraceIDFrom) for a nested run to use as its
// parent.
func (r *Recorder) Wrap(next tools.CallFunc) tools.CallFunc {
	return func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		c := r.begin(ctx, tool, args)
		ctx = WithTraceID(ctx, r.traceID)
		ctx = context.WithValue(ctx, childSlotKey{}, c.child)
		res, err := next(ctx, tool, args)
		r.end(c, res, err)
		return res, err
	}
}

func (r *Recorder) begin(ctx context.Context, tool string, args json.RawMessage) *call {
	started := r.opts.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	ord, ok := tools.CallSeq(ctx)
	if !ok || ord < 0 || r.used[ord] {
		// No sequence, or one already seen (a context inherited from an outer
		// run): take the next free ordinal so task ids stay unique.
		ord = r.next
	}
	r.used[ord] = true
	r.next = max(r.next, ord+1)

	c := &call{ordinal: ord, started: started, child: &childSlot{}}
	c.task = Task{
		TaskID:    fmt.Sprintf("t%d", ord+1),
		Tool:      tool,
		ToolID:    tool,
		Args:      cloneJSON(args),
		StartedAt: started,
	}
	if args == nil {
		c.task.Args = json.RawMessage("{}")
	}
	if r.opts.FQDNOf != nil {
		if fqdn := r.opts.FQDNOf(tool); fqdn != "" {
			c.task.Tool = fqdn
		}
	}
	if r.opts.RoutingOf != nil {
		c.task.Routing = r.opts.RoutingOf(tool)
	}
	if r.opts.LayerOf != nil {
		c.task.Layer = r.opts.LayerOf(tool, ord)
	}
	r.calls = append(r.calls, c)
	return c
}

func (r *Recorder) end(c *call, res json.RawMessage, err error) {
	ended := r.opts.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	c.done = true
	c.task.DurationMS = millis(ended.Sub(c.started))
	c.task.Success = err == nil
	if err != nil {
		c.task.Error = errMessage(err)
	} else {
		c.task.Result = cloneJSON(res)
	}
	c.task.ChildTraceID = c.child.get()
}

// Finish returns meta completed with the recorded tasks (in issue order),
// success, error_code (pmlerr.CodeOf err, INTERNAL_ERROR when err has none),
// error, trace_id, started_at (the recorder's start unless meta sets it) and
// duration. tools_used defaults to the distinct tool ids called. Calls still in
// flight appear as failed "unfinished" tasks. Finish may be called more than
// once; later completions do not change a returned Trace.
func (r *Recorder) Finish(meta Trace, err error) Trace {
	now := r.opts.Now()
	r.mu.Lock()
	calls := slices.Clone(r.calls)
	tasks := make([]Task, 0, len(calls))
	slices.SortStableFunc(calls, func(a, b *call) int { return a.ordinal - b.ordinal })
	for _, c := range calls {
		t := c.task
		if !c.done {
			t.Success = false
			t.Error = unfinishedError
			t.DurationMS = millis(now.Sub(c.started))
			t.ChildTraceID = c.child.get()
		}
		tasks = append(tasks, t)
	}
	r.mu.Unlock()

	meta.TraceID = r.traceID
	if meta.StartedAt.IsZero() {
		meta.StartedAt = r.start
	}
	meta.DurationMS = millis(now.Sub(meta.StartedAt))
	meta.Tasks = tasks
	meta.Success = err == nil
	meta.ErrorCode, meta.Error = "", ""
	if err != nil {
		meta.ErrorCode = string(pmlerr.CodeOf(err, pmlerr.Internal))
		meta.Error = errMessage(err)
	}
	if meta.Decisions == nil {
		meta.Decisions = []Decision{}
	}
	if len(meta.ToolsUsed) == 0 {
		meta.ToolsUsed = distinctTools(tasks)
	}
	return meta
}

func distinctTools(tasks []Task) []string {
	var ids []string
	seen := map[string]bool{}
	for _, t := range tasks {
		if !seen[t.ToolID] {
			seen[t.ToolID] = true
			ids = append(ids, t.ToolID)
		}
	}
	return ids
}

// errMessage is the human text of err: a *pmlerr.Error's message without the
// code prefix its Error() adds, since the code has its own field.
func errMessage(err error) string {
	if pe, ok := pmlerr.As(err); ok && pe.Message != "" {
		return pe.Message
	}
	return err.Error()
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// cloneJSON copies v: the caller may reuse its buffer after the call.
func cloneJSON(v json.RawMessage) json.RawMessage {
	if v == nil {
		return nil
	}
	return slices.Clone(v)
}
