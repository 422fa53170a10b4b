package afteranswer

import (
	"context"
	"slices"
	"testing"
)

func TestDefer(t *testing.T) {
	var got []string
	note := func(s string) func() { return func() { got = append(got, s) } }

	Defer(context.Background(), note("no queue: at once"))
	if !slices.Equal(got, []string{"no queue: at once"}) {
		t.Fatalf("without a queue: %v", got)
	}

	got = nil
	ctx, q := With(context.Background())
	Defer(ctx, note("first"))
	Defer(ctx, note("second"))
	if len(got) != 0 {
		t.Fatalf("ran before the answer was written: %v", got)
	}
	q.Run()
	if !slices.Equal(got, []string{"first", "second"}) {
		t.Fatalf("after Run: %v, want both in order", got)
	}
	// A run that goes on after its request was answered (one paused for an
	// approval) defers to a queue already run: its work runs at once.
	Defer(ctx, note("late"))
	if !slices.Equal(got, []string{"first", "second", "late"}) {
		t.Fatalf("deferred after Run: %v", got)
	}
}
