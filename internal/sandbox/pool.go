package sandbox

import (
	"log/slog"
	"sync/atomic"
)

// Creating a VM and installing the bridge takes most of a cold start
// (hundreds of microseconds), and closing one another chunk. So a few fresh
// machines wait ready, and used ones are closed, by a background worker.
//
// Only machines that never ran user code are pooled: a machine serves one
// Run and is closed after it. This is the one piece of package-level mutable
// state here, deliberately: Run is a package function, and the pool only
// holds interchangeable, never-used VMs.
var machines = newPool(4, 8)

type pool struct {
	ready  chan *machine // never used, bridge installed
	retire chan *machine // used, waiting to be closed
	busy   atomic.Bool   // a worker goroutine is running
}

func newPool(ready, retire int) *pool {
	return &pool{ready: make(chan *machine, ready), retire: make(chan *machine, retire)}
}

// get returns a fresh machine, from the pool when one is ready. The pool is
// refilled when the machine is put back, so that the refill does not compete
// with the run for the CPU; only a dry pool (a burst) starts it at once.
// Pooled machines have room for the default heap limit; a run with a larger
// one gets a machine of its own.
func (p *pool) get(memoryLimit int64) (*machine, error) {
	select {
	case m := <-p.ready:
		if m.fits(memoryLimit) {
			return m, nil
		}
		p.put(m)
	default:
		p.kick()
	}
	return newMachine(memoryLimit)
}

// put closes a used machine, in the background when the worker keeps up.
func (p *pool) put(m *machine) {
	m.run = nil
	select {
	case p.retire <- m:
		p.kick()
	default:
		m.close()
	}
}

// kick starts the worker unless it runs already.
func (p *pool) kick() {
	if p.busy.CompareAndSwap(false, true) {
		go p.work()
	}
}

// work closes retired machines and refills the pool, then exits: no
// goroutine stays behind while the pool is idle.
func (p *pool) work() {
	for {
		did, err := p.step()
		if err != nil {
			slog.Error("sandbox: cannot pre-create a VM", "err", err)
			p.busy.Store(false)
			return
		}
		if did {
			continue
		}
		p.busy.Store(false)
		// A get or put between step and Store saw busy and left its work to
		// this goroutine: look again before leaving.
		if !p.hasWork() || !p.busy.CompareAndSwap(false, true) {
			return
		}
	}
}

// step closes one retired machine or adds one fresh machine, and reports
// whether it did either.
func (p *pool) step() (bool, error) {
	select {
	case m := <-p.retire:
		m.close()
		return true, nil
	default:
	}
	if len(p.ready) == cap(p.ready) {
		return false, nil
	}
	m, err := newMachine(DefaultLimits().MemoryBytes)
	if err != nil {
		return false, err
	}
	select {
	case p.ready <- m:
		return true, nil
	default:
		m.close()
		return false, nil
	}
}

func (p *pool) hasWork() bool {
	return len(p.retire) > 0 || len(p.ready) < cap(p.ready)
}
