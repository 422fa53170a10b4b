package admission

import "container/list"

// class orders the waiters of a pool: resuming work goes before new work.
type class int

const (
	resume class = iota // an admitted execution whose code wants to run again
	start               // new work
	classes
)

// pool is a counting semaphore with a cap per tenant and a FIFO of waiters
// per tenant and class. It is not safe for concurrent use: the Controller's
// mutex guards it.
//
// Invariant, kept by calling grant after every put: no waiter could take a
// unit. So a newcomer that fits may take one at once without jumping the
// queue: the waiters ahead of it are all held back by their own tenant's cap.
type pool struct {
	max, perTenant int
	held, waiting  int
	seq            uint64
	tenants        map[string]*tenantState
	// queued holds the tenants with waiters, for grant to look at only those.
	queued map[string]*tenantState
}

type tenantState struct {
	held, waiting int
	queue         [classes]list.List // of *waiter
}

// waiter is one acquirer waiting in a pool. ready is closed when it is
// granted a unit; granted says so under the Controller's mutex, for a waiter
// that gives up at the same moment.
type waiter struct {
	tenant  string
	class   class
	seq     uint64
	ready   chan struct{}
	granted bool
	elem    *list.Element
}

func newPool(max, perTenant int) pool {
	return pool{max: max, perTenant: perTenant, tenants: map[string]*tenantState{}, queued: map[string]*tenantState{}}
}

func (p *pool) tenant(name string) *tenantState {
	ts := p.tenants[name]
	if ts == nil {
		ts = &tenantState{}
		p.tenants[name] = ts
	}
	return ts
}

// fits reports whether tenant may take a unit now.
func (p *pool) fits(tenant string) bool {
	if p.held >= p.max {
		return false
	}
	ts := p.tenants[tenant]
	return ts == nil || ts.held < p.perTenant
}

func (p *pool) take(tenant string) {
	p.held++
	p.tenant(tenant).held++
}

// put returns a unit of tenant and hands free units to waiters.
func (p *pool) put(tenant string) {
	p.held--
	ts := p.tenants[tenant]
	ts.held--
	p.forget(tenant, ts)
	p.grant()
}

// forget drops the state of a tenant that holds and awaits nothing, so the
// map does not grow with every tenant ever seen.
func (p *pool) forget(tenant string, ts *tenantState) {
	if ts.held == 0 && ts.waiting == 0 {
		delete(p.tenants, tenant)
	}
}

func (p *pool) enqueue(tenant string, c class) *waiter {
	ts := p.tenant(tenant)
	p.seq++
	w := &waiter{tenant: tenant, class: c, seq: p.seq, ready: make(chan struct{})}
	w.elem = ts.queue[c].PushBack(w)
	ts.waiting++
	p.waiting++
	p.queued[tenant] = ts
	return w
}

// dequeue removes a waiter that gave up before it was granted.
func (p *pool) dequeue(w *waiter) {
	ts := p.tenants[w.tenant]
	p.unlink(w, ts)
	p.forget(w.tenant, ts)
}

func (p *pool) unlink(w *waiter, ts *tenantState) {
	ts.queue[w.class].Remove(w.elem)
	ts.waiting--
	p.waiting--
	if ts.waiting == 0 {
		delete(p.queued, w.tenant)
	}
}

// grant hands free units to the waiters that may take them: the first class
// first, and within a class the longest waiting, among the tenants under
// their cap.
func (p *pool) grant() {
	for p.held < p.max {
		var best *waiter
		for _, ts := range p.queued {
			if ts.held >= p.perTenant {
				continue
			}
			for c := range classes {
				if e := ts.queue[c].Front(); e != nil {
					w := e.Value.(*waiter)
					if best == nil || w.class < best.class || (w.class == best.class && w.seq < best.seq) {
						best = w
					}
					break
				}
			}
		}
		if best == nil {
			return
		}
		p.unlink(best, p.tenants[best.tenant])
		p.take(best.tenant)
		best.granted = true
		close(best.ready)
	}
}
