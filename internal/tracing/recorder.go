package tracing

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
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
	// HeadSpans and TailSpans bound the calls kept as tasks: the first
	// HeadSpans and the last TailSpans; the calls in between are counted per
	// tool (Truncation). Zero takes DefaultHeadSpans and DefaultTailSpans.
	HeadSpans, TailSpans int
	// ChildTraces bounds the nested runs that keep a trace of their own
	// under this run (NewChildRecorder); zero takes DefaultChildTraces.
	ChildTraces int
	// Sanitizer, when set, makes Finish return the trace sanitized and
	// bounded (what Sanitizer.Trace does), and sanitizes the values of the
	// first HeadSpans calls as they are recorded, on the calls' goroutines,
	// so that finishing a long run costs only its last calls.
	Sanitizer *Sanitizer
}

// unfinishedError is the task error of a call still running when the trace
// was finished (the run timed out or threw while the call was in flight).
const unfinishedError = "unfinished: the run ended before the call returned"

// Recorder captures the mcp.* calls of one run. It is safe for concurrent
// use: the sandbox issues calls from several goroutines at once.
//
// What it holds is bounded whatever the run does: the first HeadSpans calls
// and the last TailSpans (a ring), per-tool sums of the others, and copies of
// arguments and results within a payload budget (capture). A call costs
// O(1) plus the bytes it keeps, never the size of its arguments or result.
type Recorder struct {
	traceID string
	opts    RecorderOptions
	start   time.Time

	mu       sync.Mutex
	head     []*call            // the first calls, arrival order
	tail     []*call            // ring of the last calls
	tailAt   int                // index of the oldest call in tail once full
	evicted  map[*call]struct{} // calls pushed out of tail while running
	agg      aggregator         // calls no longer kept
	calls    int                // every call begun
	used     map[int]bool       // ordinals of the calls kept
	next     int                // first ordinal after every one taken
	payload  int                // bytes of arguments and results held
	children childBudget
	ownsKids bool // this run created children's budget and reports it
}

type call struct {
	ordinal int
	started time.Time
	task    Task
	done    bool
	evicted bool
	inHead  bool      // kept for good: sanitized as it is recorded
	dirty   taskParts // parts of task not sanitized yet
	bytes   int       // payload held for this call
	child   *childSlot
}

// NewRecorder starts recording the run traceID; the run's start time is now.
func NewRecorder(traceID string, opts RecorderOptions) *Recorder {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	l := Limits{HeadSpans: opts.HeadSpans, TailSpans: opts.TailSpans}.withDefaults()
	opts.HeadSpans, opts.TailSpans = l.HeadSpans, l.TailSpans
	if opts.ChildTraces <= 0 {
		opts.ChildTraces = DefaultChildTraces
	}
	return &Recorder{
		traceID: traceID, opts: opts, start: opts.Now(),
		used: map[int]bool{}, evicted: map[*call]struct{}{},
		children: newChildBudget(opts.ChildTraces), ownsKids: true,
	}
}

// NewChildRecorder starts recording a nested run (a capability) called
// from ctx, a call that a Recorder wraps: the new trace is noted as that
// call's child and shares the top-level run's budget of child traces. keep
// is false once that budget is spent (or when the calling run's own trace
// is not kept): the nested run still runs, but its trace must not be kept;
// the top-level trace counts it in Truncation.ChildTracesOmitted. Without a
// RoutingOf of its own it takes the calling run's, so that its tasks say
// where they ran as the caller's do. Outside any Recorder, the new one is a
// root of its own.
func NewChildRecorder(ctx context.Context, opts RecorderOptions) (rec *Recorder, keep bool) {
	slot, ok := ctx.Value(childSlotKey{}).(*childSlot)
	if ok && opts.RoutingOf == nil {
		opts.RoutingOf = slot.routingOf
	}
	rec = NewRecorder(NewTraceID(), opts)
	if !ok {
		return rec, true
	}
	rec.ownsKids = false
	if !slot.budget.take() {
		rec.children = slot.budget.closedView()
		return rec, false
	}
	rec.children = slot.budget
	slot.set(rec.traceID)
	return rec, true
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
		r.clean(c, partArgs)
		ctx = WithTraceID(ctx, r.traceID)
		ctx = context.WithValue(ctx, childSlotKey{}, c.child)
		res, err := next(ctx, tool, args)
		r.end(c, res, err)
		r.clean(c, partResult|partError)
		return res, err
	}
}

// clean sanitizes parts of a call of the head with the recorder's
// Sanitizer, outside the lock so concurrent calls do not wait on each other.
// Only the call's own goroutine writes those parts, so nothing changes them
// meanwhile.
func (r *Recorder) clean(c *call, parts taskParts) {
	s := r.opts.Sanitizer
	if s == nil || !c.inHead {
		return
	}
	r.mu.Lock()
	parts &= c.dirty
	task := c.task
	r.mu.Unlock()
	if parts == 0 {
		return
	}
	task = s.task(task, parts)
	r.mu.Lock()
	defer r.mu.Unlock()
	grown := len(task.Args) + len(task.Result) - len(c.task.Args) - len(c.task.Result)
	r.payload += grown
	c.bytes += grown
	c.task.Args, c.task.Result, c.task.Error = task.Args, task.Result, task.Error
	c.dirty &^= parts
}

func (r *Recorder) begin(ctx context.Context, tool string, args json.RawMessage) *call {
	started := r.opts.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	ord, ok := tools.CallSeq(ctx)
	if !ok || ord < 0 || r.used[ord] {
		// No sequence, or one already seen (a context inherited from an outer
		// run): take the next free ordinal so task ids stay unique.
		ord = r.next
	}
	r.next = max(r.next, ord+1)

	c := &call{ordinal: ord, started: started, dirty: taskDirty, child: &childSlot{budget: r.children, routingOf: r.opts.RoutingOf}}
	c.task = Task{TaskID: "t" + strconv.Itoa(ord+1), Tool: tool, ToolID: tool, StartedAt: started}
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
	r.keep(c)
	if args == nil {
		c.task.Args = json.RawMessage("{}")
	} else {
		c.task.Args = r.capture(c, args)
	}
	return c
}

// keep places c among the kept calls: in head while it has room, else in
// the tail ring, whose oldest call is then no longer kept. Called with r.mu
// held.
func (r *Recorder) keep(c *call) {
	r.used[c.ordinal] = true
	if len(r.head) < r.opts.HeadSpans {
		c.inHead = true
		r.head = append(r.head, c)
		return
	}
	if len(r.tail) < r.opts.TailSpans {
		r.tail = append(r.tail, c)
		return
	}
	old := r.tail[r.tailAt]
	r.tail[r.tailAt] = c
	r.tailAt = (r.tailAt + 1) % len(r.tail)
	r.drop(old)
}

// drop stops keeping c: its payload goes back to the budget and it is
// counted in the aggregate (when it ends, if it is still running).
func (r *Recorder) drop(c *call) {
	delete(r.used, c.ordinal)
	r.payload -= c.bytes
	c.bytes = 0
	c.evicted = true
	c.task.Args, c.task.Result = nil, nil
	if c.done {
		r.agg.addTask(c.task)
		return
	}
	r.evicted[c] = struct{}{}
}

func (r *Recorder) end(c *call, res json.RawMessage, err error) {
	ended := r.opts.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	c.done = true
	c.task.DurationMS = millis(ended.Sub(c.started))
	c.task.Success = err == nil
	if err != nil {
		// The message may be as large as the tool made it: keep a window.
		c.task.Error = cutText(errMessage(err), MaxStringBytes, previewWindow)
	}
	c.task.ChildTraceID = c.child.get()
	if c.evicted {
		delete(r.evicted, c)
		r.agg.addTask(c.task)
		return
	}
	if err == nil {
		c.task.Result = r.capture(c, res)
	}
}

// Finish returns meta completed with the recorded tasks (in issue order),
// success, error_code (pmlerr.CodeOf err, INTERNAL_ERROR when err has none),
// error, trace_id, started_at (the recorder's start unless meta sets it) and
// duration. tools_used defaults to the distinct tool ids called. Calls still in
// flight appear as failed "unfinished" tasks. When calls were left out of
// the tasks, Truncated counts them per tool. Finish may be called more than
// once; later completions do not change a returned Trace.
func (r *Recorder) Finish(meta Trace, err error) Trace {
	now := r.opts.Now()
	r.mu.Lock()
	head, tail := slices.Clone(r.head), r.tailInOrder()
	byOrdinal := func(a, b *call) int { return a.ordinal - b.ordinal }
	slices.SortStableFunc(head, byOrdinal)
	slices.SortStableFunc(tail, byOrdinal)
	tasks := make([]Task, 0, len(head)+len(tail))
	dirty := make([]taskParts, 0, len(head)+len(tail))
	for _, c := range slices.Concat(head, tail) {
		tasks = append(tasks, r.snapshot(c, now))
		dirty = append(dirty, c.dirty)
	}
	agg := aggregator{}
	for _, l := range r.agg.list() {
		agg.addLine(l)
	}
	for c := range r.evicted {
		agg.addTask(r.snapshot(c, now))
	}
	calls := r.calls
	omitted := 0
	if r.ownsKids {
		omitted = r.children.omitted()
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
		meta.ToolsUsed = distinctTools(tasks, agg.list())
	}
	if agg.calls > 0 || omitted > 0 {
		headSpans := len(head)
		if agg.calls == 0 {
			headSpans = len(tasks) // no gap
		}
		meta.Truncated = &Truncation{
			Spans: calls, SpansAggregated: agg.calls, HeadSpans: headSpans,
			Aggregates: agg.list(), ChildTracesOmitted: omitted,
		}
	}
	s := r.opts.Sanitizer
	if s == nil {
		return meta
	}
	for i := range tasks {
		tasks[i] = s.task(tasks[i], dirty[i])
	}
	meta = s.fields(meta)
	return Bound(meta, Limits{HeadSpans: r.opts.HeadSpans, TailSpans: r.opts.TailSpans})
}

// snapshot is c's task as of now: a call still running is an unfinished
// failure. Called with r.mu held.
func (r *Recorder) snapshot(c *call, now time.Time) Task {
	t := c.task
	if !c.done {
		t.Success = false
		t.Error = unfinishedError
		t.DurationMS = millis(now.Sub(c.started))
		t.ChildTraceID = c.child.get()
	}
	return t
}

// tailInOrder returns the tail ring oldest first. Called with r.mu held.
func (r *Recorder) tailInOrder() []*call {
	return slices.Concat(r.tail[r.tailAt:], r.tail[:r.tailAt])
}

func distinctTools(tasks []Task, aggs []ToolAggregate) []string {
	var ids []string
	seen := map[string]bool{}
	add := func(id string) {
		if id != OtherTools && !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	for _, t := range tasks {
		add(t.ToolID)
	}
	for _, a := range aggs {
		add(a.Tool)
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
