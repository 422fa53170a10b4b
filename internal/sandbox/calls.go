package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/rawjson"
	"github.com/pml-go/pml/internal/sandbox/engine"
	"github.com/pml-go/pml/internal/tools"
)

// callResult travels from a call goroutine to the VM goroutine.
type callResult struct {
	id       int
	tool     string
	value    json.RawMessage
	err      error // *pmlerr.Error, or the CallFunc's error when it halts the run
	argBytes int64
}

// callJob is one call handed to a worker goroutine.
type callJob struct {
	seq  int
	tool string
	args json.RawMessage
}

// A call the code made waits in run.queued until the code yields to the
// event loop. Then, when it is the only call in flight, the VM goroutine
// makes it itself (callInline): the code can do nothing but wait for it, and
// handing it to another goroutine would cost two thread wake-ups, more than
// the rest of the round trip. Otherwise each call goes to a worker goroutine
// (startInvoke) and the results come back over run.results.

// startInvoke hands job to an idle worker goroutine of the run, or starts
// one. Workers live as long as the run: reusing them spares each call a
// goroutine start and the growth of its stack. There are as many as calls in
// flight, plus any still inside a CallFunc that ignored its timeout.
func (r *run) startInvoke(job callJob) {
	if r.results == nil {
		// Made here, before the first worker starts, rather than with the
		// run: a run whose calls all go inline never needs it, and its
		// buffer (a result per call in flight) was 7 KiB of every parked
		// execution.
		r.results = make(chan callResult, maxConcurrentCalls)
	}
	select {
	case r.jobs <- job: // an idle worker took it
	default:
		go r.worker(job)
	}
}

func (r *run) worker(job callJob) {
	for {
		r.invokeJob(job)
		select {
		case job = <-r.jobs:
		case <-r.finished:
			return
		}
	}
}

// invokeJob runs one call. Its context carries the issue position and the
// RPC timeout. The result is delivered once: by the CallFunc returning, or
// by the timeout when the CallFunc does not honor its context (the worker
// then stays with the CallFunc until it returns).
func (r *run) invokeJob(job callJob) {
	ctx, cancel := context.WithTimeout(r.callContext(job), r.lim.RPCTimeout)
	defer cancel()
	var delivered atomic.Bool
	deliver := func(value json.RawMessage, err error) {
		if !delivered.CompareAndSwap(false, true) {
			return
		}
		select {
		case r.results <- callResult{id: job.seq, tool: job.tool, value: value, err: err, argBytes: int64(len(job.args))}:
		case <-r.finished:
		}
	}
	stop := context.AfterFunc(ctx, func() { deliver(nil, r.callError(ctx, job.tool, ctx.Err())) })
	defer stop()
	value, err := r.invoke(ctx, job.tool, job.args)
	if err != nil {
		err = r.callError(ctx, job.tool, err)
	}
	deliver(value, err)
}

// callInline makes the call on the VM goroutine. A CallFunc that outlives
// its context (one ignoring it) must not hold the code up past the RPC
// timeout, nor the VM past the run's end, so at either point a new goroutine
// takes the VM over (abandon): it delivers the timeout and drives the run on,
// and callInline reports false once the CallFunc returns, telling its
// goroutine to leave the VM alone and end. The same timer first puts the
// VM's heap away when the call is slow (parkHeap); whichever goroutine
// drives the VM on writes it back first (unpark).
func (r *run) callInline(job callJob) (callResult, bool) {
	c := &inlineCall{job: job}
	// The timer exists before c is visible to watch: once stored, the run's
	// end may abandon c at any moment, and the goroutine taking over stops
	// c's timer (unpark). Set after the store, it was once still nil there
	// (a nil-pointer "sandbox failure" under load, issue 41).
	c.mu.Lock()
	c.timer = time.AfterFunc(min(r.parkAfter(), r.lim.RPCTimeout), func() { r.inlineTimer(c) })
	c.mu.Unlock()
	r.inline.Store(c)
	if r.ctx.Err() != nil { // watch may have looked before c was stored
		r.inline.Store(nil)
		if c.state.CompareAndSwap(0, 1) {
			r.unpark(c)
			return callResult{id: job.seq, tool: job.tool, err: r.timeout(), argBytes: int64(len(job.args))}, true
		}
		return callResult{}, false // abandoned meanwhile: another goroutine drives the run
	}
	ctx := newCallContext(r.callContext(job), r.lim.RPCTimeout)
	defer ctx.end()
	value, err := r.invoke(ctx, job.tool, job.args)
	r.inline.Store(nil)
	if !c.state.CompareAndSwap(0, 1) {
		return callResult{}, false
	}
	r.unpark(c)
	if err != nil {
		err = r.callError(ctx, job.tool, err)
	}
	return callResult{id: job.seq, tool: job.tool, value: value, err: err, argBytes: int64(len(job.args))}, true
}

// inlineTimer fires while c runs: first, when the call is slow, to put the
// VM's heap away, then at the RPC timeout.
func (r *run) inlineTimer(c *inlineCall) {
	c.mu.Lock()
	if !c.parked && r.parkAfter() < r.lim.RPCTimeout {
		c.parked = true
		if c.state.Load() == 0 {
			c.heap = r.parkHeap()
		}
		c.timer.Reset(r.lim.RPCTimeout - r.parkAfter())
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	r.abandon(c, r.rpcTimeout(c.job.tool, context.DeadlineExceeded))
}

// unpark stops c's timer and writes back the heap it put away, if any. The
// goroutine that drives the VM on after c calls it first: the one that made
// the call, or the one that took over.
func (r *run) unpark(c *inlineCall) {
	c.mu.Lock()
	c.timer.Stop()
	heap := c.heap
	c.heap = nil
	c.mu.Unlock()
	if heap != nil {
		r.m.vm.Thaw(heap)
	}
}

// parkHeap puts the VM's heap away while the code waits on a slow call
// (engine.VM.Freeze): a parked execution then holds a fraction of it. It
// runs on a timer's goroutine, while the goroutine driving the VM waits;
// nil when the VM was revoked, whose heap faults (see revoke).
func (r *run) parkHeap() (heap *engine.HeapImage) {
	vm := r.m.vm
	if vm.Revoked() {
		return nil
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			heap = nil
		}
	}()
	return vm.Freeze()
}

// defaultParkAfter is how long the code waits on tools before the VM's heap
// is put away: long past a fast tool's round trip, so that those never pay
// the 0.3 to 0.7 ms of CPU of putting it away and writing it back (most of
// it the page faults of writing it back; BenchmarkFreezeThaw), a few
// percent of a call this slow at worst.
const defaultParkAfter = 20 * time.Millisecond

// parkAfter is how long the code waits on tools before the VM's heap is put
// away.
func (r *run) parkAfter() time.Duration {
	if r.lim.parkAfter > 0 {
		return r.lim.parkAfter
	}
	return defaultParkAfter
}

// callContext is what a call's context carries: its issue position, and from
// the run's context the run's byte budget.
func (r *run) callContext(job callJob) context.Context {
	return tools.WithCallSeq(r.ctx, job.seq)
}

// inlineCall is a call in progress on the VM goroutine.
type inlineCall struct {
	job   callJob
	state atomic.Int32 // 0 running, 1 returned, 2 abandoned

	mu     sync.Mutex // held while the heap is put away or written back
	timer  *time.Timer
	parked bool              // the timer fired once: the next firing is the RPC timeout
	heap   *engine.HeapImage // the VM's heap while put away
}

// abandon lets a new goroutine drive the run on, with err as the result of
// c, unless c returned already.
func (r *run) abandon(c *inlineCall, err error) {
	if c.state.CompareAndSwap(0, 2) {
		go r.takeOver(c, callResult{id: c.job.seq, tool: c.job.tool, err: err, argBytes: int64(len(c.job.args))})
	}
}

// errMovedOn tells the goroutine whose inline call was abandoned that
// another goroutine drives the run now.
var errMovedOn = errors.New("sandbox: the run moved to another goroutine")

// takeOver drives the run on after its VM goroutine was left inside a
// CallFunc: it delivers res, the abandoned call's timeout, and goes on as
// that goroutine would have.
func (r *run) takeOver(c *inlineCall, res callResult) {
	debug.SetPanicOnFault(true) // see revoke
	growStack()
	r.drive(func() (json.RawMessage, error) {
		r.unpark(c)
		if err := r.deliver(res); err != nil {
			return nil, err
		}
		return r.loop()
	})
}

// invoke calls the CallFunc, turning a panic into a TOOL_ERROR and checking
// that the result is JSON.
func (r *run) invoke(ctx context.Context, tool string, args json.RawMessage) (value json.RawMessage, err error) {
	defer func() {
		if p := recover(); p != nil {
			slog.Error("sandbox: tool handler panicked", "tool", tool, "panic", p, "stack", string(debug.Stack()))
			value, err = nil, pmlerr.New(pmlerr.ToolError, "tool %s failed: handler panicked: %v", tool, p)
		}
	}()
	value, err = r.call(ctx, tool, args)
	if err != nil {
		return nil, err
	}
	if len(value) == 0 {
		return json.RawMessage("null"), nil
	}
	if !rawjson.Valid(value) {
		return nil, pmlerr.New(pmlerr.ToolError, "tool %s returned invalid JSON", tool)
	}
	return value, nil
}

// callError gives a call's error its wire code. A halt stays as it is.
func (r *run) callError(ctx context.Context, tool string, err error) error {
	var halt *HaltError
	if errors.As(err, &halt) {
		return err
	}
	if pe, ok := pmlerr.As(err); ok {
		return pe
	}
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil && r.ctx.Err() == nil {
		return r.rpcTimeout(tool, err)
	}
	return pmlerr.Wrap(pmlerr.ToolError, err)
}

func (r *run) rpcTimeout(tool string, err error) error {
	return &pmlerr.Error{Code: pmlerr.RPCTimeout, Message: "tool " + tool + " timed out after " + r.lim.RPCTimeout.String(), Err: err}
}

// deliver hands one call result to the code: it settles the call's promise,
// or ends the run for a halt.
func (r *run) deliver(res callResult) error {
	r.inflight--
	r.inflightBytes -= res.argBytes
	waiting := r.m.waiting[res.id]
	delete(r.m.waiting, res.id)
	defer waiting.free(r.m.vm)
	if res.err == nil {
		if !r.budget.Take(int64(len(res.value))) {
			return r.callBudgetError(res.tool)
		}
		return r.settle(waiting, res.value)
	}
	var halt *HaltError
	if errors.As(res.err, &halt) {
		return res.err
	}
	pe, ok := pmlerr.As(res.err)
	if !ok {
		pe = pmlerr.Wrap(pmlerr.ToolError, res.err)
	}
	msg := pe.Message
	if msg == "" {
		msg = pe.Error()
	}
	msg = capText(msg)
	r.toolErrs.keep(res.id, res.err)
	return r.callBridge(controlReject, waiting.reject, res.id, msg, string(pe.Code), res.tool)
}

// dispatchQueued lets the bridge hand over the calls it queued while too
// many were in flight, once there is room.
func (r *run) dispatchQueued() error {
	if !r.bridgeQueued || !r.canCall() {
		return nil
	}
	r.bridgeQueued = false
	return r.callBridge(controlDispatch, engine.Undefined, 0, "", "", "")
}

// maxKeptToolErrors bounds the Go errors a run keeps for the error of an
// uncaught tool failure: code that catches failures in a loop must not grow
// host memory. Older ones are dropped, leaving that error's Err nil.
const maxKeptToolErrors = 1024

// toolErrors keeps the most recent failed calls' Go errors by call id.
type toolErrors struct {
	byID map[int]error
	// order holds the ids in the order kept, a ring once it is full. It
	// grows with the errors kept: most runs keep none, and a ring of its
	// full size in every run was 8 KiB of each parked execution.
	order []int
	next  int
}

func (k *toolErrors) keep(id int, err error) {
	if k.byID == nil {
		k.byID = map[int]error{}
	}
	if len(k.order) < maxKeptToolErrors {
		k.byID[id] = err
		k.order = append(k.order, id)
		return
	}
	delete(k.byID, k.order[k.next])
	k.byID[id] = err
	k.order[k.next] = id
	k.next = (k.next + 1) % maxKeptToolErrors
}

func (k *toolErrors) get(id int) error { return k.byID[id] }
