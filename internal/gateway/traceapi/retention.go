package traceapi

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/pml-go/pml/internal/store"
)

// Retention is how long and how many traces the gateway keeps (docs/limits.md): traces older than MaxAge, and those of a tenant past its
// MaxCount newest, are deleted by a pass every Interval. A zero MaxAge or
// MaxCount keeps traces forever on that account.
type Retention struct {
	MaxAge   time.Duration
	MaxCount int
	Interval time.Duration
}

// Defaults of the retention policy, in `pml gateway` and in local mode.
const (
	DefaultRetentionAge      = 30 * 24 * time.Hour
	DefaultRetentionCount    = 10_000
	DefaultRetentionInterval = 5 * time.Minute
)

// DefaultRetention is the policy of a gateway not told otherwise.
func DefaultRetention() Retention {
	return Retention{MaxAge: DefaultRetentionAge, MaxCount: DefaultRetentionCount, Interval: DefaultRetentionInterval}
}

// Validate refuses negative limits.
func (p Retention) Validate() error {
	if p.MaxAge < 0 || p.MaxCount < 0 || p.Interval < 0 {
		return fmt.Errorf("trace retention: age %v, count %d, interval %v: none may be negative", p.MaxAge, p.MaxCount, p.Interval)
	}
	return nil
}

// pruneBreather is the pause between two full batches of a pass, so the
// writes of requests get the database in between.
const pruneBreather = 5 * time.Millisecond

// retention applies a Retention. The first pass checks every tenant;
// later ones check the count of the tenants this process wrote traces for
// since (each replica prunes what it wrote; the age limit covers everyone).
// A tenant that gets a tenth of its MaxCount in writes wakes the next pass
// early, so a burst cannot outgrow the count by much before it runs.
type retention struct {
	policy Retention
	store  store.Store
	log    *slog.Logger
	obs    Observer
	now    func() time.Time
	wake   chan struct{}
	busy   func() (end func()) // Config.Busy, never nil

	mu      sync.Mutex
	touched map[store.Scope]int
}

func newRetention(p Retention, st store.Store, log *slog.Logger, obs Observer, busy func() (end func())) *retention {
	if p.Interval <= 0 {
		p.Interval = DefaultRetentionInterval
	}
	if busy == nil {
		busy = func() func() { return func() {} }
	}
	return &retention{policy: p, store: st, log: log, obs: obs, now: time.Now, busy: busy,
		wake: make(chan struct{}, 1), touched: map[store.Scope]int{}}
}

// noteWrites records n traces stored for sc.
func (r *retention) noteWrites(sc store.Scope, n int) {
	if r == nil || r.policy.MaxCount <= 0 || n <= 0 {
		return
	}
	nudge := max(r.policy.MaxCount/10, 1)
	r.mu.Lock()
	before := r.touched[sc]
	r.touched[sc] = before + n
	r.mu.Unlock()
	if before < nudge && before+n >= nudge {
		select {
		case r.wake <- struct{}{}:
		default:
		}
	}
}

// RunRetention applies the retention policy until ctx is done: at once,
// then every Interval. Without a policy (or a store) it returns at once.
func (a *API) RunRetention(ctx context.Context) {
	if a.retention == nil || a.store == nil {
		return
	}
	a.retention.run(ctx)
}

// run passes until ctx is done.
func (r *retention) run(ctx context.Context) {
	if r.policy.MaxAge <= 0 && r.policy.MaxCount <= 0 {
		return
	}
	r.busyPass(ctx, nil)
	t := time.NewTicker(r.policy.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-r.wake:
		}
		r.busyPass(ctx, r.takeTouched())
	}
}

// busyPass is pass, counted as work in flight (Config.Busy).
func (r *retention) busyPass(ctx context.Context, scopes []store.Scope) {
	defer r.busy()()
	r.pass(ctx, scopes)
}

func (r *retention) takeTouched() []store.Scope {
	r.mu.Lock()
	defer r.mu.Unlock()
	scopes := make([]store.Scope, 0, len(r.touched)) // non-nil: only these
	for sc := range r.touched {
		scopes = append(scopes, sc)
	}
	clear(r.touched)
	return scopes
}

// pass deletes in batches until nothing is left to delete; scopes nil
// checks every tenant's count. Errors are logged: the next pass retries.
func (r *retention) pass(ctx context.Context, scopes []store.Scope) int {
	q := store.TraceRetention{Keep: r.policy.MaxCount, Scopes: scopes, Limit: store.DefaultPruneLimit}
	if r.policy.MaxAge > 0 {
		q.Before = r.now().Add(-r.policy.MaxAge)
	}
	total := 0
	for {
		n, err := r.store.PruneTraces(ctx, q)
		total += n
		r.obs.TracesPruned(n)
		if err != nil {
			if ctx.Err() == nil {
				r.log.Warn("trace retention pass", "err", err, "deleted", total)
			}
			return total
		}
		if n < q.Limit {
			break
		}
		select {
		case <-ctx.Done():
			return total
		case <-time.After(pruneBreather):
		}
	}
	if total > 0 {
		r.log.Debug("trace retention pass", "deleted", total)
	}
	return total
}
