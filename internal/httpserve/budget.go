package httpserve

import (
	"context"
	"sync"

	"golang.org/x/sync/semaphore"

	"github.com/pml-go/pml/internal/wire"
)

// tenantShareDivisor sets how much of the body budget one tenant may hold:
// a quarter, so a key whose requests stall mid-body slows its own tenant
// while the others keep three quarters.
const tenantShareDivisor = 4

// bodyBudget accounts the bytes of request bodies held in memory: in total,
// and per tenant when the request has one.
type bodyBudget struct {
	total *semaphore.Weighted
	share int64

	mu      sync.Mutex
	tenants map[any]*tenantBudget
}

type tenantBudget struct {
	sem   *semaphore.Weighted
	users int // reservations held or waited for; the entry goes at zero
}

func newBodyBudget(totalBytes int64) *bodyBudget {
	return &bodyBudget{
		total:   semaphore.NewWeighted(totalBytes),
		share:   max(totalBytes/tenantShareDivisor, wire.MaxRequestBytes+1),
		tenants: map[any]*tenantBudget{},
	}
}

// reservation is bytes held from a bodyBudget.
type reservation struct {
	b      *bodyBudget
	tenant *tenantBudget // nil without a tenant
	scope  any
	n      int64
}

// reserve waits for n bytes, for the tenant's share first (when tenanted),
// then from the total, until ctx ends.
func (b *bodyBudget) reserve(ctx context.Context, scope any, tenanted bool, n int64) (*reservation, error) {
	r := &reservation{b: b, scope: scope, n: n}
	if tenanted {
		b.mu.Lock()
		t := b.tenants[scope]
		if t == nil {
			t = &tenantBudget{sem: semaphore.NewWeighted(b.share)}
			b.tenants[scope] = t
		}
		t.users++
		b.mu.Unlock()
		r.tenant = t
		if err := t.sem.Acquire(ctx, n); err != nil {
			r.leave()
			return nil, err
		}
	}
	if err := b.total.Acquire(ctx, n); err != nil {
		if r.tenant != nil {
			r.tenant.sem.Release(n)
			r.leave()
		}
		return nil, err
	}
	return r, nil
}

// shrink gives back what the reservation holds beyond n bytes.
func (r *reservation) shrink(n int64) {
	if n >= r.n {
		return
	}
	r.b.total.Release(r.n - n)
	if r.tenant != nil {
		r.tenant.sem.Release(r.n - n)
	}
	r.n = n
}

// release gives back everything.
func (r *reservation) release() {
	r.shrink(0)
	if r.tenant != nil {
		r.leave()
	}
}

// leave drops the reservation's use of its tenant's entry.
func (r *reservation) leave() {
	r.b.mu.Lock()
	defer r.b.mu.Unlock()
	if r.tenant.users--; r.tenant.users == 0 {
		delete(r.b.tenants, r.scope)
	}
}

// tenantCount is how many tenants hold or wait for bytes.
func (b *bodyBudget) tenantCount() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.tenants)
}
