// Package workers runs functions on goroutines that, done with one, wait a
// while for the next instead of ending. A request of pml stdio passes
// through three goroutines made for it (the call's, the run's, the VM's),
// and a new goroutine grows its stack anew: 8 KiB to the 16 or 32 KiB those
// reserve, a fresh allocation copied into on every request. A worker keeps
// the stack it grew (docs/performance.md "pml stdio's first call").
package workers

import (
	"slices"
	"sync"
	"time"
)

// Pool hands functions to its idle workers, or starts a new one. At most
// maxIdle wait at a time, each for at most wait: a burst's workers end with
// it rather than hold their stacks (10,000 parked runs' VM goroutines, say).
//
// An idle worker is on the list before it waits, and Go takes it off the
// list before handing it work through its own buffered channel: a worker
// counted idle is always the one that runs the next function, never a
// fresh goroutine beside it.
type Pool struct {
	mu      sync.Mutex
	idle    []*worker // the most recently idle last: its stack is the warmest
	closing bool
	closed  chan struct{}
	maxIdle int
	wait    time.Duration
}

type worker struct{ work chan func() }

// New returns a pool keeping up to 8 idle workers, each for up to 10
// seconds: enough for the requests an AI client sends back to back, and
// for the concurrency of a 2-core machine several times over.
func New() *Pool {
	return &Pool{closed: make(chan struct{}), maxIdle: 8, wait: 10 * time.Second}
}

// Close ends the idle workers now, and each busy one when its function
// returns. Go still runs functions after Close, each on a goroutine that
// ends with it.
func (p *Pool) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closing {
		p.closing = true
		close(p.closed)
	}
}

// Go runs f on a worker of the pool: an idle one if any is waiting, else a
// new goroutine. Like a go statement it does not wait for f, and a panic in
// f ends the program.
func (p *Pool) Go(f func()) {
	p.mu.Lock()
	if p.closing {
		p.mu.Unlock()
		go f()
		return
	}
	if n := len(p.idle); n > 0 {
		w := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		w.work <- f // buffered: the worker takes it whenever it looks
		return
	}
	p.mu.Unlock()
	go p.run(&worker{work: make(chan func(), 1)}, f)
}

// Idle is how many workers wait for work now.
func (p *Pool) Idle() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.idle)
}

func (p *Pool) run(w *worker, f func()) {
	var timer *time.Timer
	for {
		f()
		f = nil // nothing of the last function stays reachable while waiting
		if !p.park(w) {
			return
		}
		if timer == nil {
			timer = time.NewTimer(p.wait)
		} else {
			timer.Reset(p.wait)
		}
		select {
		case f = <-w.work:
			timer.Stop()
			continue
		case <-timer.C:
		case <-p.closed:
		}
		if p.unpark(w) {
			return
		}
		f = <-w.work // Go took this worker off the list just before: its work is on the way
		timer.Stop()
	}
}

// park puts w on the idle list, unless the pool is closing or has enough
// idle workers; it reports whether w should wait.
func (p *Pool) park(w *worker) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closing || len(p.idle) >= p.maxIdle {
		return false
	}
	p.idle = append(p.idle, w)
	return true
}

// unpark takes w off the idle list; false means Go already did, and handed
// it a function.
func (p *Pool) unpark(w *worker) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	i := slices.Index(p.idle, w)
	if i < 0 {
		return false
	}
	p.idle = slices.Delete(p.idle, i, i+1)
	return true
}
