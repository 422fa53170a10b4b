// Package admission decides which executions may run, so that a burst of
// them cannot take a process's memory: the gateway and the package both run
// every sandboxed execution through one Controller (docs/limits.md "Admission and overload").
//
// Two limits hold. An execution takes an execution place for its whole run
// (MaxExecutions, and MaxExecutionsPerTenant of them per tenant): one parked
// on a slow tool costs under a megabyte, so a thousand may wait at once.
// And it takes a running place (MaxRunning) only while its code may run,
// that is while it has no tool call in flight: code that runs may fill its
// whole sandbox heap, so MaxRunning times the heap limit bounds the memory
// running code can grow into. A request that finds no execution place waits
// in a short queue (MaxQueue long, QueueWait at most), then gets OVERLOADED
// with retry_after_ms; an admitted execution waits for a running place up to
// StartWait, the work already admitted going first. When the process's
// resident memory passes MemoryCeiling, nothing new is admitted at all.
package admission

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/sandbox"
)

// Limits are a Controller's bounds. Zero fields take the defaults of
// WithDefaults.
type Limits struct {
	// MaxExecutions is how many executions are admitted at once, those
	// waiting on a tool included.
	MaxExecutions int
	// MaxExecutionsPerTenant is how many of those one tenant may hold. It
	// also gives each tenant the same share of MaxRunning and MaxQueue.
	// Negative: no cap per tenant (a process serving one tenant).
	MaxExecutionsPerTenant int
	// MaxRunning is how many executions may run code at once (none of their
	// calls in flight). Each may fill its sandbox heap.
	MaxRunning int
	// MaxQueue is how many requests may wait for an execution place; a
	// negative value means none wait.
	MaxQueue int
	// QueueWait is how long one waits for an execution place before it is
	// refused; it is also the retry_after_ms of a refusal.
	QueueWait time.Duration
	// StartWait is how long an admitted execution waits for its first
	// running place before it is refused.
	StartWait time.Duration
	// MemoryCeiling is the resident memory of the process above which no
	// new execution is admitted; negative disables it.
	MemoryCeiling int64
}

const (
	// parkedBytes is what an execution waiting on a tool costs the process,
	// rounded up from the ~0.7 MiB of BenchmarkThousandParked (docs/performance.md).
	parkedBytes = 1 << 20
	// runningPerCore: running code is CPU-bound, so more running executions
	// than a few per core add memory and latency, not throughput.
	runningPerCore = 4

	minDefaultExecutions = 64
	maxDefaultExecutions = 2048
	defaultQueue         = 128
	defaultQueueWait     = 2 * time.Second
	// unknownMemory stands in for the available memory where the system
	// does not say.
	unknownMemory = 4 << 30
)

// ExecutionBytes is the memory one running execution may take under sl: its
// engine heap and the return value it may produce.
func ExecutionBytes(sl sandbox.Limits) int64 {
	d := sandbox.DefaultLimits()
	heap, result := sl.MemoryBytes, int64(sl.MaxResultBytes)
	if heap <= 0 {
		heap = d.MemoryBytes
	}
	if result <= 0 {
		result = int64(d.MaxResultBytes)
	}
	return heap + result
}

// WithDefaults fills the zero fields of l from this machine's cores and
// available memory (the cgroup's when it sets a lower limit), for
// executions under the sandbox limits sl:
//
//   - MaxExecutions: half the available memory at 1 MiB per parked
//     execution, between 64 and 2,048;
//   - MaxExecutionsPerTenant: half of MaxExecutions (negative: all of them);
//   - MaxRunning: 4 per core, at most as many as half the available memory
//     holds at ExecutionBytes(sl) each, at least 2;
//   - MaxQueue 128, QueueWait 2 s, StartWait the sandbox's wall-clock limit;
//   - MemoryCeiling: the resident memory now plus three quarters of the
//     available memory.
func (l Limits) WithDefaults(sl sandbox.Limits) Limits {
	avail := availableMemory()
	if avail <= 0 {
		avail = unknownMemory
	}
	if l.MaxExecutions <= 0 {
		l.MaxExecutions = int(min(max(avail/2/parkedBytes, minDefaultExecutions), maxDefaultExecutions))
	}
	switch {
	case l.MaxExecutionsPerTenant == 0:
		l.MaxExecutionsPerTenant = max(1, l.MaxExecutions/2)
	case l.MaxExecutionsPerTenant < 0:
		l.MaxExecutionsPerTenant = l.MaxExecutions
	}
	l.MaxExecutionsPerTenant = min(l.MaxExecutionsPerTenant, l.MaxExecutions)
	if l.MaxRunning <= 0 {
		l.MaxRunning = int(max(min(int64(runningPerCore*runtime.NumCPU()), avail/2/ExecutionBytes(sl)), 2))
	}
	switch {
	case l.MaxQueue == 0:
		l.MaxQueue = defaultQueue
	case l.MaxQueue < 0:
		l.MaxQueue = 0
	}
	if l.QueueWait <= 0 {
		l.QueueWait = defaultQueueWait
	}
	if l.StartWait <= 0 {
		l.StartWait = sandbox.DefaultLimits().Timeout
		if sl.Timeout > 0 {
			l.StartWait = sl.Timeout
		}
	}
	if l.MemoryCeiling == 0 {
		l.MemoryCeiling = residentBytes() + avail/4*3
	}
	return l
}

// Validate refuses limits that cannot mean anything: negative counts of
// executions or running places, negative waits.
func (l Limits) Validate() error {
	switch {
	case l.MaxExecutions < 0:
		return fmt.Errorf("admission: max executions %d: want 0 (the default) or more", l.MaxExecutions)
	case l.MaxRunning < 0:
		return fmt.Errorf("admission: max running %d: want 0 (the default) or more", l.MaxRunning)
	case l.QueueWait < 0 || l.StartWait < 0:
		return fmt.Errorf("admission: negative wait (%v, %v)", l.QueueWait, l.StartWait)
	}
	return nil
}

// QueueLength is the MaxQueue for a queue of n places, 0 being none.
func QueueLength(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

// share is n scaled by a tenant's share of the executions, at least 1.
func (l Limits) share(n int) int {
	return max(1, (n*l.MaxExecutionsPerTenant+l.MaxExecutions-1)/l.MaxExecutions)
}

// Reasons a request is refused, the label values of the rejection counter.
const (
	ReasonQueueFull = "queue_full" // no execution place and no room to wait for one
	ReasonWait      = "wait"       // waited QueueWait (or StartWait) in vain
	ReasonMemory    = "memory"     // the process is over its memory ceiling
)

var reasons = [...]string{ReasonQueueFull, ReasonWait, ReasonMemory}

// Reasons lists every reason a refusal is counted under.
func Reasons() []string { return reasons[:] }

// Controller admits executions. Safe for concurrent use.
type Controller struct {
	lim Limits

	mu      sync.Mutex
	execs   pool
	running pool

	rejected [len(reasons)]atomic.Int64
	rss      rssSample
}

// New returns a Controller for executions under the sandbox limits sl, with
// l's zero fields defaulted (see WithDefaults).
func New(l Limits, sl sandbox.Limits) *Controller {
	l = l.WithDefaults(sl)
	return &Controller{
		lim:     l,
		execs:   newPool(l.MaxExecutions, l.MaxExecutionsPerTenant),
		running: newPool(l.MaxRunning, l.share(l.MaxRunning)),
	}
}

// Limits returns the controller's effective limits.
func (c *Controller) Limits() Limits { return c.lim }

// Stats is a snapshot of a Controller.
type Stats struct {
	Admitted     int // executions holding a place: running or waiting on a tool
	Running      int // executions whose code may run now
	Queued       int // requests waiting for an execution place
	WaitingToRun int // admitted executions waiting for a running place
	Rejected     map[string]int64
}

// Stats returns the controller's current figures.
func (c *Controller) Stats() Stats {
	c.mu.Lock()
	s := Stats{Admitted: c.execs.held, Running: c.running.held, Queued: c.execs.waiting, WaitingToRun: c.running.waiting}
	c.mu.Unlock()
	s.Rejected = make(map[string]int64, len(reasons))
	for i, r := range reasons {
		s.Rejected[r] = c.rejected[i].Load()
	}
	return s
}

// Shed reports whether a request should be refused before it is even read:
// every execution place is taken and the queue is full, or memory is over
// the ceiling. It counts the refusal, and gives the delay to retry after.
func (c *Controller) Shed() (retryAfter time.Duration, shed bool) {
	if c.overMemory() {
		c.count(ReasonMemory)
		return c.lim.QueueWait, true
	}
	c.mu.Lock()
	full := c.execs.held >= c.execs.max && c.execs.waiting >= c.lim.MaxQueue
	c.mu.Unlock()
	if full {
		c.count(ReasonQueueFull)
	}
	return c.lim.QueueWait, full
}

// admit takes an execution place for tenant, waiting in the queue when none
// is free.
func (c *Controller) admit(ctx context.Context, tenant string) (*ticket, error) {
	if c.overMemory() {
		return nil, c.refuse(ReasonMemory, "memory",
			"the process is over its memory ceiling (%d MiB resident); no new execution starts until it drops", c.rss.value()>>20)
	}
	c.mu.Lock()
	if c.execs.fits(tenant) {
		c.execs.take(tenant)
		c.mu.Unlock()
		return &ticket{c: c, tenant: tenant}, nil
	}
	limit, n := c.execLimit(tenant)
	ts := c.execs.tenants[tenant]
	if c.execs.waiting >= c.lim.MaxQueue || (ts != nil && ts.waiting >= c.lim.share(c.lim.MaxQueue)) {
		c.mu.Unlock()
		return nil, c.refuse(ReasonQueueFull, limit, "too many executions at once: all %d places (%s) are taken and the queue is full", n, limit)
	}
	w := c.execs.enqueue(tenant, start)
	c.mu.Unlock()
	if err := c.await(ctx, &c.execs, w, c.lim.QueueWait); err != nil {
		return nil, err
	}
	return &ticket{c: c, tenant: tenant}, nil
}

// execLimit names the limit that holds tenant back and its value. Under c.mu.
func (c *Controller) execLimit(tenant string) (string, int) {
	if c.execs.held >= c.execs.max {
		return "executions", c.execs.max
	}
	return "executions_per_tenant", c.execs.perTenant
}

// acquireRunning takes a running place for tenant. New work waits at most
// StartWait; resuming work waits as long as ctx lets it.
func (c *Controller) acquireRunning(ctx context.Context, tenant string, cl class) error {
	c.mu.Lock()
	if c.running.fits(tenant) {
		c.running.take(tenant)
		c.mu.Unlock()
		return nil
	}
	w := c.running.enqueue(tenant, cl)
	c.mu.Unlock()
	var wait time.Duration
	if cl == start {
		wait = c.lim.StartWait
	}
	return c.await(ctx, &c.running, w, wait)
}

func (c *Controller) releaseRunning(tenant string) {
	c.mu.Lock()
	c.running.put(tenant)
	c.mu.Unlock()
}

func (c *Controller) releaseExecution(tenant string) {
	c.mu.Lock()
	c.execs.put(tenant)
	c.mu.Unlock()
}

// await waits until w is granted, ctx ends or wait passes (0: no bound).
func (c *Controller) await(ctx context.Context, p *pool, w *waiter, wait time.Duration) error {
	var timeout <-chan time.Time
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
	case <-timeout:
	}
	c.mu.Lock()
	if w.granted { // granted as we gave up: keep it
		c.mu.Unlock()
		return nil
	}
	p.dequeue(w)
	limit, n := "running", p.max
	if p == &c.execs {
		limit, n = c.execLimit(w.tenant)
	}
	c.mu.Unlock()
	if err := ctx.Err(); errors.Is(err, context.Canceled) {
		return &pmlerr.Error{Code: pmlerr.Cancelled, Message: "cancelled by the caller while waiting for a place to run", Err: err}
	} else if err != nil {
		return &pmlerr.Error{Code: pmlerr.ExecutionTimeout, Message: "gave up waiting for a place to run: " + err.Error(), Err: err}
	}
	return c.refuse(ReasonWait, limit, "too many executions at once: no place (%s, %d) came free within %v", limit, n, wait)
}

// refuse counts a refusal and returns its OVERLOADED error.
func (c *Controller) refuse(reason, limit, format string, args ...any) error {
	c.count(reason)
	return pmlerr.New(pmlerr.Overloaded, format+"; retry later", args...).
		With("retry_after_ms", c.lim.QueueWait.Milliseconds()).With("limit", limit)
}

func (c *Controller) count(reason string) {
	for i, r := range reasons {
		if r == reason {
			c.rejected[i].Add(1)
		}
	}
}

func (c *Controller) overMemory() bool {
	return c.lim.MemoryCeiling > 0 && c.rss.value() > c.lim.MemoryCeiling
}

// rssSample is the process's resident memory, read at most every
// rssInterval: reading it costs a system call, and admission runs per
// execution.
type rssSample struct {
	at, bytes atomic.Int64
}

const rssInterval = 10 * time.Millisecond

func (s *rssSample) value() int64 {
	now := time.Now().UnixNano()
	if now-s.at.Load() < int64(rssInterval) {
		return s.bytes.Load()
	}
	v := residentBytes()
	s.bytes.Store(v)
	s.at.Store(now)
	return v
}

// String describes the limits, for a start-up log line.
func (l Limits) String() string {
	return fmt.Sprintf("executions %d (per tenant %d), running %d, queue %d for %v, memory ceiling %d MiB",
		l.MaxExecutions, l.MaxExecutionsPerTenant, l.MaxRunning, l.MaxQueue, l.QueueWait, l.MemoryCeiling>>20)
}

// TenantStats is Stats for one tenant's executions (Rejected is not kept
// per tenant and stays nil).
func (c *Controller) TenantStats(tenant string) Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	var s Stats
	if ts := c.execs.tenants[tenant]; ts != nil {
		s.Admitted, s.Queued = ts.held, ts.waiting
	}
	if ts := c.running.tenants[tenant]; ts != nil {
		s.Running, s.WaitingToRun = ts.held, ts.waiting
	}
	return s
}
