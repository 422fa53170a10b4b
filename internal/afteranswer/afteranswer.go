// Package afteranswer holds work a request's answer does not wait for,
// until that answer is written. A top-level run's trace is complete when
// the run ends, and only queueing it (encoding it and appending it to the
// outbox) is left: pml stdio writes the answer first and queues the trace
// after, on the same goroutine, so the client never waits for it
// (docs/performance.md "The trace after the answer").
//
// The transport that writes an answer offers the wait (With, then Run once
// the answer is written); where none does (the SDK's own path, the
// gateway's HTTP endpoint, whose traces are stored before the answer so
// that an answered run's trace outlives its replica), Defer runs the work
// at once, as before.
package afteranswer

import (
	"context"
	"sync"
)

type queueKey struct{}

// Queue is the work deferred until one request's answer is written.
type Queue struct {
	mu      sync.Mutex
	work    []func()
	written bool
}

// With returns ctx carrying a new Queue, which the caller runs (Run) once
// it has written the answer to the request ctx serves.
func With(ctx context.Context) (context.Context, *Queue) {
	q := &Queue{}
	return context.WithValue(ctx, queueKey{}, q), q
}

// Defer runs fn after the answer of the request ctx serves is written,
// when the transport writing it offers that (With), and at once otherwise,
// or when that answer was already written (a run paused for an approval
// goes on after its first request is answered).
func Defer(ctx context.Context, fn func()) {
	if q, ok := ctx.Value(queueKey{}).(*Queue); ok {
		q.mu.Lock()
		if !q.written {
			q.work = append(q.work, fn)
			q.mu.Unlock()
			return
		}
		q.mu.Unlock()
	}
	fn()
}

// Run runs the deferred work in the order it was deferred; what is
// deferred afterwards runs at once. The caller calls it once the answer is
// written, or once it knows no answer will be.
func (q *Queue) Run() {
	q.mu.Lock()
	work := q.work
	q.work, q.written = nil, true
	q.mu.Unlock()
	for _, fn := range work {
		fn()
	}
}
