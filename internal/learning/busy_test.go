package learning

import (
	"context"
	"sync"
	"testing"
)

// Config.Busy is told when the background worker starts, and its end when
// the worker has run the queue dry, once per start: a process whose
// GOMAXPROCS follows its work (procscale) counts the worker while it runs.
func TestBusyCountsTheBackgroundWorker(t *testing.T) {
	var mu sync.Mutex
	inflight, starts, maxInflight := 0, 0, 0
	busy := func() func() {
		mu.Lock()
		defer mu.Unlock()
		inflight++
		starts++
		maxInflight = max(maxInflight, inflight)
		return func() {
			mu.Lock()
			defer mu.Unlock()
			inflight--
		}
	}
	l := New(Config{Busy: busy})
	release := make(chan struct{})
	ran := make(chan int, 3)
	for i := range 3 {
		l.later(func(context.Context) {
			if i == 0 {
				<-release
			}
			mu.Lock()
			ran <- inflight
			mu.Unlock()
		})
	}
	close(release)
	for range 3 {
		if n := <-ran; n != 1 {
			t.Fatalf("work ran with %d counted in flight, want 1", n)
		}
	}
	l.mu.Lock()
	for l.running {
		l.idle.Wait()
	}
	l.mu.Unlock()
	mu.Lock()
	defer mu.Unlock()
	if inflight != 0 || starts != 1 || maxInflight != 1 {
		t.Fatalf("after the queue: %d in flight, %d starts, at most %d; want 0, 1, 1", inflight, starts, maxInflight)
	}
}
