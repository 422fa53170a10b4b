package tracing

import (
	"context"
	"sync"
)

type traceIDKey struct{}

// WithTraceID returns ctx carrying id as the trace of the code making calls.
func WithTraceID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, traceIDKey{}, id)
}

// TraceIDFrom returns the trace id set by WithTraceID (a Recorder sets it on
// every call it wraps). A nested run uses it as its ParentTraceID.
func TraceIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(traceIDKey{}).(string)
	return id
}

type childSlotKey struct{}

// childSlot receives the id of the child trace a call started; the Recorder
// reads it when the call returns. budget is the calling run's budget of
// child traces; routingOf is the calling run's, which a nested run's calls
// take too (they run on the same side, through the same bridge).
type childSlot struct {
	mu        sync.Mutex
	id        string
	budget    childBudget
	routingOf func(tool string) string
}

// childBudget is how many more nested runs under one top-level run may keep
// a trace. Every recorder of the tree shares the counters; a run whose own
// trace is not kept gets a closed view, so none of its descendants keeps one
// either (their parent would not exist).
type childBudget struct {
	shared *budgetCounters
	closed bool
}

type budgetCounters struct {
	mu      sync.Mutex
	left    int
	skipped int
}

func newChildBudget(n int) childBudget {
	return childBudget{shared: &budgetCounters{left: n}}
}

// take reserves one child trace, or counts one more omitted.
func (b childBudget) take() bool {
	b.shared.mu.Lock()
	defer b.shared.mu.Unlock()
	if b.closed || b.shared.left <= 0 {
		b.shared.skipped++
		return false
	}
	b.shared.left--
	return true
}

func (b childBudget) omitted() int {
	b.shared.mu.Lock()
	defer b.shared.mu.Unlock()
	return b.shared.skipped
}

// closedView shares b's counters but keeps nothing more.
func (b childBudget) closedView() childBudget {
	return childBudget{shared: b.shared, closed: true}
}

func (s *childSlot) set(id string) {
	s.mu.Lock()
	s.id = id
	s.mu.Unlock()
}

func (s *childSlot) get() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.id
}

// NoteChildTrace tells the Recorder wrapping the current call that the call
// runs as child trace id, so the parent's task gets child_trace_id. It is a
// no-op when ctx did not come through a Recorder.
func NoteChildTrace(ctx context.Context, id string) {
	if s, ok := ctx.Value(childSlotKey{}).(*childSlot); ok {
		s.set(id)
	}
}
