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
// reads it when the call returns.
type childSlot struct {
	mu sync.Mutex
	id string
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
