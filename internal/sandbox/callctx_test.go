package sandbox

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"
)

type ctxKey struct{}

// A context derived from a call's context (an HTTP request's, an MCP call's)
// keeps the run's values, ends with the call, and costs no goroutine of its
// own: a parked execution would otherwise hold one more per call.
func TestCallContextChildrenNeedNoGoroutine(t *testing.T) {
	run, cancelRun := context.WithCancel(context.WithValue(context.Background(), ctxKey{}, "run"))
	defer cancelRun()
	const n = 200
	calls := make([]*callContext, n)
	children := make([]context.Context, n)
	before := runtime.NumGoroutine()
	for i := range calls {
		calls[i] = newCallContext(run, time.Minute)
		var cancel context.CancelFunc
		children[i], cancel = context.WithCancel(calls[i])
		defer cancel()
	}
	if grew := runtime.NumGoroutine() - before; grew > n/10 {
		t.Fatalf("%d contexts derived from call contexts started %d goroutines", n, grew)
	}
	for i, c := range children {
		if c.Value(ctxKey{}) != "run" {
			t.Fatalf("child %d lost the run's values", i)
		}
		if c.Err() != nil {
			t.Fatalf("child %d is done before its call ended: %v", i, c.Err())
		}
	}
	calls[0].end()
	select {
	case <-children[0].Done():
	case <-time.After(5 * time.Second):
		t.Fatal("a child of an ended call is not canceled")
	}
	if children[1].Err() != nil {
		t.Fatal("ending one call canceled another's child")
	}
	cancelRun()
	for i, c := range children[1:] {
		select {
		case <-c.Done():
		case <-time.After(5 * time.Second):
			t.Fatalf("child %d outlived its run", i+1)
		}
	}
	// A child derived after its call ended is born canceled.
	late := newCallContext(context.Background(), time.Minute)
	late.end()
	child, cancel := context.WithCancel(late)
	defer cancel()
	if !errors.Is(child.Err(), context.Canceled) {
		t.Fatalf("a child of an ended call: %v, want canceled", child.Err())
	}
}
