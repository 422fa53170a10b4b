package admission

import (
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/sandbox"
	"github.com/pml-go/pml/internal/testfixture"
)

// small is a controller with explicit limits and no memory ceiling.
func small(l Limits) *Controller {
	if l.MemoryCeiling == 0 {
		l.MemoryCeiling = -1
	}
	return New(l, sandbox.Limits{})
}

func enter(t *testing.T, c *Controller, tenant string) (context.Context, *VM) {
	t.Helper()
	ctx, vm, err := c.Enter(context.Background(), tenant)
	if err != nil {
		t.Fatalf("enter %q: %v", tenant, err)
	}
	return ctx, vm
}

// wantOverloaded checks err is OVERLOADED with retry_after_ms and limit.
func wantOverloaded(t *testing.T, err error, limit string) {
	t.Helper()
	pe, ok := pmlerr.As(err)
	if !ok || pe.Code != pmlerr.Overloaded {
		t.Fatalf("want OVERLOADED, got %v", err)
	}
	if ms, ok := pe.Details["retry_after_ms"].(int64); !ok || ms <= 0 {
		t.Fatalf("retry_after_ms missing or not positive: %#v", pe.Details)
	}
	if pe.Details["limit"] != limit {
		t.Fatalf("limit %v, want %s", pe.Details["limit"], limit)
	}
}

func wantStats(t *testing.T, c *Controller, admitted, running, queued int) {
	t.Helper()
	s := c.Stats()
	if s.Admitted != admitted || s.Running != running || s.Queued != queued {
		t.Fatalf("stats %+v, want admitted %d running %d queued %d", s, admitted, running, queued)
	}
}

func TestQueueThenOverloaded(t *testing.T) {
	c := small(Limits{MaxExecutions: 2, MaxExecutionsPerTenant: -1, MaxQueue: 1, QueueWait: 200 * time.Millisecond})
	_, a := enter(t, c, "x")
	_, b := enter(t, c, "x")
	// The third waits in the queue, the fourth finds it full at once.
	queued := make(chan error, 1)
	go func() {
		_, vm, err := c.Enter(context.Background(), "x")
		if err == nil {
			vm.Exit()
		}
		queued <- err
	}()
	testfixture.WaitFor(t, "a queued request", func() bool { return c.Stats().Queued == 1 })
	_, _, err := c.Enter(context.Background(), "x")
	wantOverloaded(t, err, "executions")
	// Nothing frees within QueueWait: the queued one is refused too.
	wantOverloaded(t, <-queued, "executions")
	s := c.Stats()
	if s.Rejected[ReasonQueueFull] != 1 || s.Rejected[ReasonWait] != 1 {
		t.Fatalf("rejections %v", s.Rejected)
	}
	wantStats(t, c, 2, 2, 0)
	// Once a place frees, the next request gets in.
	a.Exit()
	_, d := enter(t, c, "x")
	d.Exit()
	b.Exit()
	wantStats(t, c, 0, 0, 0)
}

func TestQueuedRequestGetsTheFreedPlace(t *testing.T) {
	c := small(Limits{MaxExecutions: 1, MaxExecutionsPerTenant: -1, MaxQueue: 4, QueueWait: time.Minute})
	_, a := enter(t, c, "x")
	got := make(chan error, 2)
	for range 2 {
		go func() {
			_, vm, err := c.Enter(context.Background(), "x")
			if err == nil {
				time.Sleep(10 * time.Millisecond)
				vm.Exit()
			}
			got <- err
		}()
	}
	testfixture.WaitFor(t, "two queued", func() bool { return c.Stats().Queued == 2 })
	a.Exit()
	for range 2 {
		if err := <-got; err != nil {
			t.Fatal(err)
		}
	}
	wantStats(t, c, 0, 0, 0)
}

// One tenant at its cap neither blocks another tenant nor fills the
// queue for it.
func TestTenantCapDoesNotBlockOthers(t *testing.T) {
	c := small(Limits{MaxExecutions: 4, MaxExecutionsPerTenant: 2, MaxRunning: 4, MaxQueue: 4, QueueWait: 100 * time.Millisecond})
	_, a1 := enter(t, c, "a")
	_, a2 := enter(t, c, "a")
	// a's share of the queue is 2 places of 4.
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			_, vm, err := c.Enter(context.Background(), "a")
			if err == nil {
				vm.Exit()
			}
			errs <- err
		}()
	}
	testfixture.WaitFor(t, "a's queue share taken", func() bool { return c.Stats().Queued == 2 })
	_, _, err := c.Enter(context.Background(), "a")
	wantOverloaded(t, err, "executions_per_tenant")
	// b gets in at once, twice.
	_, b1 := enter(t, c, "b")
	_, b2 := enter(t, c, "b")
	// a's queued requests are refused after QueueWait (by then the
	// gateway is full too).
	for range 2 {
		if err := <-errs; pmlerr.CodeOf(err, "") != pmlerr.Overloaded {
			t.Fatalf("queued request of a: %v", err)
		}
	}
	for _, vm := range []*VM{a1, a2, b1, b2} {
		vm.Exit()
	}
	wantStats(t, c, 0, 0, 0)
}

// A running place is held only while no call is in flight, and code coming
// back from a call goes before new work.
func TestRunningPlaceIsFreeWhileACallIsInFlight(t *testing.T) {
	c := small(Limits{MaxExecutions: 8, MaxRunning: 1})
	ctxA, a := enter(t, c, "x")
	// b is admitted but waits to run.
	bIn := make(chan *VM)
	go func() {
		_, vm, err := c.Enter(context.Background(), "x")
		if err != nil {
			t.Error(err)
		}
		bIn <- vm
	}()
	testfixture.WaitFor(t, "b waiting to run", func() bool { return c.Stats().WaitingToRun == 1 })
	wantStats(t, c, 2, 1, 0)

	// a calls a tool: b runs meanwhile.
	release := make(chan struct{})
	called := make(chan struct{})
	aBack := make(chan struct{})
	call := a.Wrap(func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
		close(called)
		<-release
		return json.RawMessage(`1`), nil
	})
	go func() {
		if _, err := call(ctxA, "t:t", nil); err != nil {
			t.Error(err)
		}
		close(aBack)
	}()
	<-called
	b := <-bIn
	// c arrives while b runs; then a's call returns: a must go first.
	cIn := make(chan *VM)
	go func() {
		_, vm, err := c.Enter(context.Background(), "x")
		if err != nil {
			t.Error(err)
		}
		cIn <- vm
	}()
	testfixture.WaitFor(t, "c waiting to run", func() bool { return c.Stats().WaitingToRun == 1 })
	close(release)
	testfixture.WaitFor(t, "a waiting to run again", func() bool { return c.Stats().WaitingToRun == 2 })
	b.Exit()
	<-aBack // a got the place back
	select {
	case <-cIn:
		t.Fatal("new work ran before the code coming back from its call")
	case <-time.After(20 * time.Millisecond):
	}
	a.Exit()
	(<-cIn).Exit()
	wantStats(t, c, 0, 0, 0)
}

func TestStartWaitRefuses(t *testing.T) {
	c := small(Limits{MaxExecutions: 8, MaxRunning: 1, StartWait: 50 * time.Millisecond})
	_, a := enter(t, c, "x")
	_, _, err := c.Enter(context.Background(), "x")
	wantOverloaded(t, err, "running")
	// Its execution place was given back.
	wantStats(t, c, 1, 1, 0)
	a.Exit()
	wantStats(t, c, 0, 0, 0)
}

// A VM started by running code (a capability) joins its execution: no
// second execution place, and the running place it needs is the one the
// caller gave up by calling.
func TestNestedVMJoinsTheExecution(t *testing.T) {
	c := small(Limits{MaxExecutions: 1, MaxRunning: 1, StartWait: 50 * time.Millisecond})
	ctx, vm := enter(t, c, "x")
	call := vm.Wrap(func(ctx context.Context, _ string, _ json.RawMessage) (json.RawMessage, error) {
		nctx, nested, err := c.Enter(ctx, "x")
		if err != nil {
			return nil, err
		}
		defer nested.Exit()
		wantStats(t, c, 1, 1, 0)
		// The nested VM's own call frees the place again.
		return nested.Wrap(func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
			if s := c.Stats(); s.Running != 0 {
				t.Errorf("running %d during the nested call", s.Running)
			}
			return json.RawMessage(`2`), nil
		})(nctx, "t:t", nil)
	})
	out, err := call(ctx, "cap:x", nil)
	if err != nil || string(out) != "2" {
		t.Fatalf("%s %v", out, err)
	}
	wantStats(t, c, 1, 1, 0)
	vm.Exit()
	wantStats(t, c, 0, 0, 0)
}

// Another controller's execution in the context is not joined.
func TestForeignExecutionIsNotJoined(t *testing.T) {
	c1 := small(Limits{MaxExecutions: 1})
	c2 := small(Limits{MaxExecutions: 1})
	ctx, vm := enter(t, c1, "x")
	_, vm2, err := c2.Enter(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	wantStats(t, c2, 1, 1, 0)
	vm2.Exit()
	vm.Exit()
}

func TestMemoryCeiling(t *testing.T) {
	c := small(Limits{MaxExecutions: 4, MemoryCeiling: 1}) // any process is over one byte
	_, _, err := c.Enter(context.Background(), "x")
	wantOverloaded(t, err, "memory")
	if _, shed := c.Shed(); !shed {
		t.Fatal("over the memory ceiling, requests must be shed")
	}
	if s := c.Stats(); s.Rejected[ReasonMemory] != 2 || s.Admitted != 0 {
		t.Fatalf("%+v", s)
	}
}

func TestShedOnlyWhenPlacesAndQueueAreFull(t *testing.T) {
	c := small(Limits{MaxExecutions: 1, MaxExecutionsPerTenant: -1, MaxQueue: 1, QueueWait: time.Minute})
	if _, shed := c.Shed(); shed {
		t.Fatal("shed while idle")
	}
	_, a := enter(t, c, "x")
	if _, shed := c.Shed(); shed {
		t.Fatal("shed with the queue empty")
	}
	ctx, cancel := context.WithCancel(context.Background())
	queued := make(chan error, 1)
	go func() {
		_, _, err := c.Enter(ctx, "x")
		queued <- err
	}()
	testfixture.WaitFor(t, "queued", func() bool { return c.Stats().Queued == 1 })
	retry, shed := c.Shed()
	if !shed || retry != time.Minute {
		t.Fatalf("shed %v retry %v", shed, retry)
	}
	// A request whose client leaves stops waiting with its context's error.
	cancel()
	err := <-queued
	if pmlerr.CodeOf(err, "") != pmlerr.Cancelled || !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled wait: %v", err)
	}
	wantStats(t, c, 1, 1, 0)
	a.Exit()
	wantStats(t, c, 0, 0, 0)
}

// Calls that return after the execution ended (abandoned by the sandbox)
// take nothing.
func TestLateCallAfterExitTakesNothing(t *testing.T) {
	c := small(Limits{MaxExecutions: 2, MaxRunning: 1})
	ctx, vm := enter(t, c, "x")
	release := make(chan struct{})
	done := make(chan struct{})
	call := vm.Wrap(func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
		<-release
		return nil, nil
	})
	go func() {
		_, _ = call(ctx, "t:t", nil)
		close(done)
	}()
	testfixture.WaitFor(t, "the call in flight", func() bool { return c.Stats().Running == 0 })
	vm.Exit()
	close(release)
	<-done
	wantStats(t, c, 0, 0, 0)
}

// Many executions entering, calling (some concurrently, some nesting) and
// exiting at once never hold more running places than allowed and leave
// nothing behind.
func TestConcurrentUseKeepsTheBounds(t *testing.T) {
	const maxRunning = 3
	c := small(Limits{MaxExecutions: 16, MaxExecutionsPerTenant: 8, MaxRunning: maxRunning, MaxQueue: 64, QueueWait: time.Minute, StartWait: time.Minute})
	stop := make(chan struct{})
	var watch sync.WaitGroup
	watch.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if s := c.Stats(); s.Running > maxRunning || s.Admitted > 16 {
				t.Errorf("bounds broken: %+v", s)
				return
			}
		}
	})
	tool := func(ctx context.Context, _ string, _ json.RawMessage) (json.RawMessage, error) {
		time.Sleep(time.Millisecond)
		return nil, nil
	}
	var wg sync.WaitGroup
	for i := range 64 {
		wg.Go(func() {
			tenant := []string{"a", "b"}[i%2]
			ctx, vm, err := c.Enter(context.Background(), tenant)
			if err != nil {
				t.Error(err)
				return
			}
			defer vm.Exit()
			call := vm.Wrap(func(ctx context.Context, tool2 string, args json.RawMessage) (json.RawMessage, error) {
				if i%3 != 0 {
					return tool(ctx, tool2, args)
				}
				nctx, nested, err := c.Enter(ctx, tenant)
				if err != nil {
					return nil, err
				}
				defer nested.Exit()
				return nested.Wrap(tool)(nctx, "t:t", nil)
			})
			var calls sync.WaitGroup
			for range 1 + i%3 {
				calls.Go(func() {
					if _, err := call(ctx, "t:t", nil); err != nil {
						t.Error(err)
					}
				})
			}
			calls.Wait()
		})
	}
	wg.Wait()
	close(stop)
	watch.Wait()
	wantStats(t, c, 0, 0, 0)
	if s := c.Stats(); s.WaitingToRun != 0 {
		t.Fatalf("%+v", s)
	}
}

func TestDefaults(t *testing.T) {
	l := Limits{}.WithDefaults(sandbox.Limits{})
	if l.MaxExecutions < minDefaultExecutions || l.MaxExecutions > maxDefaultExecutions ||
		l.MaxExecutionsPerTenant != l.MaxExecutions/2 || l.MaxRunning < 2 ||
		l.MaxQueue != defaultQueue || l.QueueWait != defaultQueueWait || l.StartWait != sandbox.DefaultLimits().Timeout || l.MemoryCeiling <= 0 {
		t.Fatalf("defaults %s", l)
	}
	// Memory allowing, a thousand executions parked on tools fit in one
	// tenant's share (docs/limits.md "Admission and overload").
	if availableMemory() >= 4<<30 && l.MaxExecutionsPerTenant < 1000 {
		t.Fatalf("per-tenant default %d with %d MiB available", l.MaxExecutionsPerTenant, availableMemory()>>20)
	}
	one := Limits{MaxExecutions: 10, MaxExecutionsPerTenant: -1, MaxQueue: QueueLength(0), MemoryCeiling: -1}.WithDefaults(sandbox.Limits{Timeout: time.Second})
	if one.MaxExecutionsPerTenant != 10 || one.MaxQueue != 0 || one.StartWait != time.Second || one.MemoryCeiling != -1 {
		t.Fatalf("explicit %s", one)
	}
	if got := ExecutionBytes(sandbox.Limits{MemoryBytes: 8 << 20}); got != 16<<20 {
		t.Fatalf("ExecutionBytes %d", got)
	}
}

// With no queue, a request that finds no place is refused at once.
func TestNoQueue(t *testing.T) {
	c := small(Limits{MaxExecutions: 1, MaxExecutionsPerTenant: -1, MaxQueue: QueueLength(0)})
	_, a := enter(t, c, "x")
	start := time.Now()
	_, _, err := c.Enter(context.Background(), "x")
	wantOverloaded(t, err, "executions")
	if d := time.Since(start); d > time.Second {
		t.Fatalf("refusal took %v", d)
	}
	a.Exit()
}

// A tenant gets its share of the running places too: its code running
// flat out leaves the rest to others.
func TestTenantShareOfRunningPlaces(t *testing.T) {
	c := small(Limits{MaxExecutions: 4, MaxExecutionsPerTenant: 2, MaxRunning: 2, StartWait: 50 * time.Millisecond})
	_, a1 := enter(t, c, "a")
	// a's second execution is admitted but finds a's one running place taken.
	_, _, err := c.Enter(context.Background(), "a")
	wantOverloaded(t, err, "running")
	_, b1 := enter(t, c, "b")
	wantStats(t, c, 2, 2, 0)
	a1.Exit()
	b1.Exit()
	wantStats(t, c, 0, 0, 0)
}

func TestValidate(t *testing.T) {
	for _, l := range []Limits{{MaxExecutions: -1}, {MaxRunning: -2}, {QueueWait: -time.Second}, {StartWait: -1}} {
		if err := l.Validate(); err == nil {
			t.Errorf("%+v accepted", l)
		}
	}
	// Negative values that mean "none" are fine.
	if err := (Limits{MaxExecutionsPerTenant: -1, MaxQueue: -1, MemoryCeiling: -1}).Validate(); err != nil {
		t.Fatal(err)
	}
}

// The resident memory is read again on every call from the one open
// statm: 64 MiB touched between two reads shows in the second.
func TestResidentBytesFollowsGrowth(t *testing.T) {
	before := residentBytes()
	if before == 0 {
		t.Skip("no /proc/self/statm here")
	}
	grown := make([]byte, 64<<20)
	for i := range grown {
		grown[i] = 1
	}
	if after := residentBytes(); after-before < 60<<20 {
		t.Fatalf("resident %d MiB, then %d MiB after touching 64 MiB", before>>20, after>>20)
	}
	runtime.KeepAlive(grown)
}
