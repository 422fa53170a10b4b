package workers

import (
	"runtime"
	"sync"
	"testing"
	"time"
)

// waitFor polls cond for up to five seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// A function runs on the goroutine the last one ran on, once it is idle.
func TestWorkerIsReused(t *testing.T) {
	p := New()
	stacks := make(chan uintptr, 2)
	here := func() {
		var b [64]byte
		n := runtime.Stack(b[:], false) // "goroutine N [running]:"
		var id uintptr
		for _, c := range b[len("goroutine "):n] {
			if c < '0' || c > '9' {
				break
			}
			id = id*10 + uintptr(c-'0')
		}
		stacks <- id
	}
	p.Go(here)
	first := <-stacks
	waitFor(t, "the worker to be idle", func() bool { return p.Idle() == 1 })
	p.Go(here)
	if second := <-stacks; second != first {
		t.Errorf("ran on goroutine %d, then %d: the idle worker was not used", first, second)
	}
}

// Concurrent functions each get a worker; past maxIdle, workers end, and
// an idle worker ends after idle.
func TestWorkersEnd(t *testing.T) {
	base := runtime.NumGoroutine()
	p := New()
	p.maxIdle, p.wait = 2, 50*time.Millisecond
	var started, release sync.WaitGroup
	release.Add(1)
	for range 8 {
		started.Add(1)
		p.Go(func() { started.Done(); release.Wait() })
	}
	started.Wait() // all 8 run at once: none waited for another
	release.Done()
	waitFor(t, "two workers to stay", func() bool { return p.Idle() == 2 && runtime.NumGoroutine() <= base+2 })
	waitFor(t, "the idle workers to end", func() bool { return p.Idle() == 0 && runtime.NumGoroutine() <= base })
	done := make(chan struct{})
	p.Go(func() { close(done) }) // the pool still serves after its workers ended
	<-done
}

// Close ends the idle workers at once; the pool still runs functions.
func TestCloseEndsIdleWorkers(t *testing.T) {
	base := runtime.NumGoroutine()
	p := New()
	done := make(chan struct{})
	p.Go(func() { done <- struct{}{} })
	<-done
	waitFor(t, "the worker to be idle", func() bool { return p.Idle() == 1 })
	p.Close()
	waitFor(t, "the idle worker to end", func() bool { return p.Idle() == 0 && runtime.NumGoroutine() <= base })
	p.Go(func() { close(done) })
	<-done
	waitFor(t, "the goroutine to end", func() bool { return runtime.NumGoroutine() <= base })
}

// A worker whose wait ends just as Go hands it a function still runs that
// function: with waits of a microsecond, the two race on every call.
func TestNoFunctionIsLostToAnEndingWait(t *testing.T) {
	p := New()
	p.wait = time.Microsecond
	var ran sync.WaitGroup
	for range 20000 {
		ran.Add(1)
		p.Go(ran.Done)
		if p.Idle() == 0 {
			runtime.Gosched() // let workers reach their wait now and then
		}
	}
	done := make(chan struct{})
	go func() { ran.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a function handed to the pool never ran")
	}
}
