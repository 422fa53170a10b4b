// Package workers runs functions on goroutines that, done with one, wait a
// while for the next instead of ending. A request of pml stdio passes
// through three goroutines made for it (the call's, the run's, the VM's),
// and a new goroutine grows its stack anew: 8 KiB to the 16 or 32 KiB those
// reserve, a fresh allocation copied into on every request. A worker keeps
// the stack it grew (docs/performance.md "pml stdio's first call").
package workers

import (
	"sync"
	"sync/atomic"
	"time"
)

// Pool hands functions to its idle workers, or starts a new one. At most
// maxIdle wait at a time, each for at most idle: a burst's workers end with
// it rather than hold their stacks (10,000 parked runs' VM goroutines, say).
type Pool struct {
	work    chan func()
	closed  chan struct{}
	close   sync.Once
	waiting atomic.Int32
	maxIdle int32
	idle    time.Duration
}

// New returns a pool keeping up to 8 idle workers, each for up to 10
// seconds: enough for the requests an AI client sends back to back, and
// for the concurrency of a 2-core machine several times over.
func New() *Pool {
	return &Pool{work: make(chan func()), closed: make(chan struct{}), maxIdle: 8, idle: 10 * time.Second}
}

// Close ends the idle workers now, and each busy one when its function
// returns. Go still runs functions after Close, each on a goroutine that
// ends with it.
func (p *Pool) Close() { p.close.Do(func() { close(p.closed) }) }

// Go runs f on a worker of the pool: an idle one if any is waiting, else a
// new goroutine. Like a go statement it does not wait for f, and a panic in
// f ends the program.
func (p *Pool) Go(f func()) {
	select {
	case p.work <- f:
	default:
		go p.worker(f)
	}
}

// Idle is how many workers wait for work now.
func (p *Pool) Idle() int { return int(p.waiting.Load()) }

func (p *Pool) worker(f func()) {
	var timer *time.Timer
	for {
		f()
		f = nil // nothing of the last function stays reachable while waiting
		if p.waiting.Add(1) > p.maxIdle {
			p.waiting.Add(-1)
			return
		}
		if timer == nil {
			timer = time.NewTimer(p.idle)
		} else {
			timer.Reset(p.idle)
		}
		select {
		case f = <-p.work:
			p.waiting.Add(-1)
		case <-timer.C:
			p.waiting.Add(-1)
			return
		case <-p.closed:
			p.waiting.Add(-1)
			return
		}
	}
}
