package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"math"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/pml-go/pml/internal/lru"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/rawjson"
	"github.com/pml-go/pml/internal/sandbox/engine"
	"github.com/pml-go/pml/internal/tools"
	"github.com/pml-go/pml/internal/workers"
)

// Result is what a successful Run produced. On failure Run still returns the
// logs and memory figure gathered so far, with Value nil.
type Result struct {
	Value         json.RawMessage // the code's return value as JSON; undefined -> null
	Logs          []string
	LogsTruncated bool
	MemoryBytes   int64 // engine memory in use at the end (for the "sandbox memory" metric)
}

// Run evaluates js, the source of a parenthesized function expression taking
// one parameter `args`, e.g. "(async function (args) {\n  return await
// mcp.math.add({a:1,b:2});\n})", in a fresh VM. It calls the function with
// args (a JSON object; nil or empty means {}), drives its promise to
// completion and returns the result. Every mcp.<ns>.<action>(a) call becomes
// call(ctx, "ns:action", json(a)); a nil call answers UNKNOWN_TOOL.
//
// Errors are *pmlerr.Error (codes in the package doc), except a *HaltError
// from call, which Run returns as call returned it.
func Run(ctx context.Context, js string, args json.RawMessage, call tools.CallFunc, lim Limits) (Result, error) {
	lim = lim.withDefaults()
	argsText, err := argsObject(args)
	if err != nil {
		return Result{}, err
	}
	if call == nil {
		call = unknownTool
	}
	tape, err := startTape(tapeOf(ctx))
	if err != nil {
		return Result{}, pmlerr.Wrap(pmlerr.Internal, err)
	}
	if tape != nil {
		ctx = WithTape(ctx, nil) // nested runs keep none
	}
	r := &run{
		parent:   ctx,
		started:  time.Now(),
		call:     call,
		lim:      lim,
		finished: make(chan struct{}),
		jobs:     make(chan callJob),
		done:     make(chan runOutput, 1),
		revoked:  make(chan struct{}),
		budget:   tools.NewBudget(lim.MaxCallBytes),
		tape:     tape,
	}
	if err := ctx.Err(); err != nil {
		return Result{}, r.timeout()
	}
	m, err := machines.get(lim.MemoryBytes)
	if err != nil {
		return Result{}, &pmlerr.Error{Code: pmlerr.Internal, Message: "cannot create a JS VM", Err: err}
	}
	// The byte budget goes on the run's context once, not on each call's.
	r.ctx, r.cancel = context.WithTimeout(tools.WithBudget(ctx, r.budget), lim.Timeout)
	r.m, m.run = m, r

	// The VM runs on its own goroutine so that Run can answer at the
	// deadline even when the engine is inside one long built-in call, which
	// the interrupt handler cannot stop (see timeoutGrace). The goroutine
	// also takes the engine's deep recursion off the caller's stack. It is
	// one a finished run left idle, when there is one: its stack is grown.
	vmGoroutines.Go(func() { r.start(js, argsText) })
	cpu := time.NewTimer(lim.CPUBudget)
	defer cpu.Stop()
	for stopping := false; !stopping; {
		select {
		case out := <-r.done:
			return r.cleanup(out)
		case <-r.ctx.Done():
			stopping = true
		case <-cpu.C:
			// The interrupt handler stops JS that polls it at the CPU budget;
			// this catches a built-in that never polls. The budget counts
			// CPU time, which a starved VM thread uses slower than the wall
			// clock passes: look again when it could have run out, but not
			// more often than cpuRecheck.
			if left := lim.CPUBudget - r.cpuSpent(); left > 0 {
				cpu.Reset(max(left, cpuRecheck))
				continue
			}
			r.cpuOut.Store(true)
			r.cancel() // stops the VM (watch) and the calls in flight
			stopping = true
		}
	}
	grace := time.NewTimer(timeoutGrace)
	defer grace.Stop()
	select {
	case out := <-r.done:
		return r.cleanup(out)
	case <-grace.C:
	}
	if !r.claimed.CompareAndSwap(false, true) { // the VM answered just now
		return r.cleanup(<-r.done)
	}
	r.revoke()
	r.cancel() // calls still in flight end with the run
	return Result{}, r.timeout()
}

// vmGoroutines are the goroutines VMs run on. Like the pool of machines
// it is process-wide on purpose: Run is a package function, and an idle
// worker holds nothing of the run it served.
var vmGoroutines = workers.New()

// revoke ends a VM stuck in a built-in past the grace: its heap becomes
// inaccessible, the built-in's next read faults, and the VM goroutine,
// which runs with debug.SetPanicOnFault, unwinds and drops the VM (see
// arena.go). Only Run calls it, after claiming the run, so the VM goroutine
// can no longer hand the VM to anyone else.
func (r *run) revoke() {
	if err := r.m.vm.Revoke(); err != nil {
		slog.Warn("sandbox: code did not stop at its deadline and its VM cannot be revoked; it ends when the built-in it runs returns", "err", err)
	}
	close(r.revoked)
}

// start is the body of the VM goroutine.
func (r *run) start(js, argsText string) {
	debug.SetPanicOnFault(true) // see revoke
	growStack()
	r.stopWatch = r.watch()
	r.drive(func() (json.RawMessage, error) { return r.execute(js, argsText) })
}

// drive runs f, which drives the VM until the code has an outcome, and ends
// the run with it, unless another goroutine took the run over meanwhile.
func (r *run) drive(f func() (json.RawMessage, error)) {
	value, err := r.guard(f)
	if err != nil && r.tape != nil {
		// A run that ended early (a pause, its deadline while it waited for
		// an approval) may be run again, reading the same time and
		// randomness.
		r.tape.record()
	}
	if err == errMovedOn {
		return
	}
	r.end(value, err)
}

// end hands the run's output to Run, which cleans up after the VM; or, when
// Run stopped waiting, cleans up itself. The goroutine ending the run is the
// last to touch the VM.
func (r *run) end(value json.RawMessage, err error) {
	r.stopWatch()
	if r.claimed.CompareAndSwap(false, true) {
		// Run takes it. This goroutine ends right after, so that Run
		// resumes on this thread rather than waiting for another to wake.
		r.done <- runOutput{res: Result{Logs: r.logs, LogsTruncated: r.logsTruncated, MemoryBytes: r.m.vm.MemoryBytes()}, value: value, err: err}
		return
	}
	// Run answered at the deadline and revoked the VM: drop it untouched.
	<-r.revoked
	close(r.finished)
	r.cancel()
	r.m.close()
}

// cleanup releases what the run holds once the VM stopped for good, and
// returns its output.
func (r *run) cleanup(out runOutput) (Result, error) {
	close(r.finished) // call goroutines stop delivering
	r.cancel()        // and their contexts end
	machines.put(r.m)
	return out.result()
}

// errRevoked ends the drive of a VM that Run revoked.
var errRevoked = errors.New("sandbox: the VM was revoked")

// guard runs f, turning a panic into an INTERNAL_ERROR.
func (r *run) guard(f func() (json.RawMessage, error)) (value json.RawMessage, err error) {
	defer func() {
		if p := recover(); p != nil {
			if r.m.vm.InJS() {
				// The panic left the engine mid-stretch: end the stretch,
				// which lets go of the thread it locked.
				r.leaveJS()
			}
			if r.m.vm.Revoked() {
				// The fault revoke causes: Run answered already.
				value, err = nil, errRevoked
				return
			}
			slog.Error("sandbox: panic while running code", "panic", p, "stack", string(debug.Stack()))
			value, err = nil, pmlerr.New(pmlerr.Internal, "sandbox failure: %v", p)
		}
	}()
	return f()
}

// cpuRecheck is the least time between two looks of Run at the CPU budget
// of a run still short of it: past the budget, a built-in that never polls
// the interrupt handler runs on at most this much.
const cpuRecheck = time.Millisecond

// timeoutGrace is how long after the deadline Run waits for the VM to stop.
// The engine checks for interrupts between bytecodes, not inside a built-in
// (a sort, an includes over 2^32 holes). Past the grace, Run returns
// EXECUTION_TIMEOUT and revokes the VM, which ends it within microseconds.
const timeoutGrace = 100 * time.Millisecond

// growStack grows the goroutine's stack to what the engine typically needs
// while it is nearly empty, in one cheap copy, rather than in several
// doublings that each copy the engine's deep frames.
//
//go:noinline
func growStack() {
	var pad [stackReserve]byte
	touch(pad[:])
}

// stackReserve makes the stack 16 KiB (a deeper run grows it on). The VM
// goroutine waits inside the slow calls it makes (callInline) on that
// stack, which the collector shrinks only at a collection and only while
// three quarters of it are unused: a reserve of 64 KiB made every parked
// execution hold a 128 KiB stack (docs/performance.md "What one parked
// execution holds"), and one of 16 KiB a 32 KiB stack until a collection
// came: 10,000 parked executions peaked 56–157 MiB higher with it in three
// paired runs (docs/performance.md "Under 1 GiB (issue 42)").
const stackReserve = 8 << 10

//go:noinline
func touch(b []byte) { b[len(b)-1] = 0 }

type runOutput struct {
	res   Result
	value json.RawMessage
	err   error
}

func (o runOutput) result() (Result, error) {
	if o.err != nil {
		return o.res, o.err
	}
	o.res.Value = o.value
	return o.res, nil
}

// maxConcurrentCalls bounds the mcp.* calls of one run in flight at once;
// further calls wait in the bridge, in issue order. It keeps a run from
// starting goroutines without end.
const maxConcurrentCalls = 64

// run is the state of one Run.
type run struct {
	parent   context.Context    // the caller's
	ctx      context.Context    // parent with the Timeout; calls derive from it
	cancel   context.CancelFunc // of ctx
	started  time.Time
	call     tools.CallFunc
	tape     *runTape // nil: the run keeps no tape of its time and randomness
	lim      Limits
	budget   *tools.Budget // bytes moved through mcp.*, shared with the calls
	m        *machine
	finished chan struct{}              // closed when the run is over
	results  chan callResult            // call goroutines -> VM goroutine; made with the first worker (startInvoke)
	jobs     chan callJob               // VM goroutine -> idle call workers (unbuffered)
	done     chan runOutput             // the goroutine ending the run -> Run
	claimed  atomic.Bool                // set by the first of: the VM ending the run, Run giving up at the deadline
	revoked  chan struct{}              // closed once Run revoked the VM it claimed
	inline   atomic.Pointer[inlineCall] // the call the VM goroutine is making, if any
	cpuOut   atomic.Bool                // the CPU budget ran out
	cpuUsed  atomic.Int64               // nanoseconds of JS run so far, not counting the stretch in progress

	// The rest belongs to the goroutine driving the VM: the one Run
	// started, or the one that took over from it (see callInline).
	stopWatch     func()
	parkTimer     *time.Timer // awaitResult's, made at its first wait
	queued        []callJob   // calls the code made, not started yet
	seq           int         // issue position of the next call
	inflight      int
	inflightBytes int64 // argument bytes of the calls in flight
	toolErrs      toolErrors
	logs          []string
	logBytes      int
	logsTruncated bool
	outcome       *outcome // set once the code returned or failed
	bridgeQueued  bool     // the bridge holds calls Go refused while too many were in flight
}

type outcome struct {
	value json.RawMessage
	err   error
}

// argsObject returns args as JSON object text.
func argsObject(args json.RawMessage) (string, error) {
	t := bytes.TrimSpace(args)
	if len(t) == 0 || string(t) == "null" {
		return "{}", nil
	}
	if t[0] != '{' || !rawjson.Valid(t) {
		return "", pmlerr.New(pmlerr.InvalidRequest, "args must be a JSON object")
	}
	return string(t), nil
}

// watch interrupts the VM once the run's context ends, and takes the run
// over from a CallFunc holding the VM goroutine.
func (r *run) watch() (stop func()) {
	stopAfter := context.AfterFunc(r.ctx, func() {
		if c := r.inline.Load(); c != nil {
			r.abandon(c, r.timeout())
		}
		r.m.vm.Stop()
	})
	return func() { stopAfter() }
}

// execute compiles and starts the code, then runs the event loop.
func (r *run) execute(js, argsText string) (json.RawMessage, error) {
	vm := r.m.vm
	vm.SetMemoryLimit(r.lim.MemoryBytes)
	fn, err := r.load(js)
	if err != nil {
		return nil, err
	}
	args := vm.NewString(argsText)
	if args.IsException() {
		vm.Free(fn)
		return nil, r.exception()
	}
	err = r.callJS(r.m.controlFn, engine.Int(controlStart), fn, args)
	// The bridge holds the function now. Freed here, not deferred: once
	// loop hands the VM to another goroutine (takeOver), this one must not
	// touch it again.
	vm.Free(fn)
	vm.Free(args)
	if err != nil {
		return nil, err
	}
	return r.loop()
}

// load evaluates js to its function, through the process's cache of
// compiled code: AI clients and capabilities send the same code again and
// again, and loading bytecode takes a fraction of compiling.
func (r *run) load(js string) (engine.Value, error) {
	vm := r.m.vm
	if r.ctx.Err() != nil {
		return engine.Undefined, r.timeout()
	}
	code, ok := compiled.Get(js)
	if !ok {
		r.enterJS()
		code, ok = vm.Compile(js, false)
		r.leaveJS()
		if !ok {
			return engine.Undefined, r.compileError()
		}
		code = compiled.Add(js, code, len(js)+len(code))
	}
	r.enterJS()
	fn := vm.EvalBytecode(code)
	r.leaveJS()
	if fn.IsException() {
		return engine.Undefined, r.exception()
	}
	return fn, nil
}

// compiled caches the bytecode of the code Run was given, by its source.
// Like the pool of machines it is process-wide on purpose: it holds only
// immutable compiler output, the same for every caller.
var compiled = lru.New[string, []byte](1024, 32<<20)

// loop runs jobs, starts calls and delivers their results until the code
// has an outcome.
func (r *run) loop() (json.RawMessage, error) {
	for {
		if err := r.drain(); err != nil {
			return nil, err
		}
		if r.outcome != nil {
			return r.outcome.value, r.outcome.err
		}
		if r.inflight == 0 {
			return nil, r.stuck()
		}
		if len(r.queued) == 1 && r.inflight == 1 {
			// The code waits for this one call and nothing else: make it
			// here rather than hand it to another goroutine and wait.
			job := r.queued[0]
			r.queued = r.queued[:0]
			res, ok := r.callInline(job)
			if !ok {
				return nil, errMovedOn
			}
			if err := r.deliver(res); err != nil {
				return nil, err
			}
			if err := r.dispatchQueued(); err != nil {
				return nil, err
			}
			continue
		}
		for _, job := range r.queued {
			r.startInvoke(job)
		}
		clear(r.queued)
		r.queued = r.queued[:0]
		res, ok := r.awaitResult()
		if !ok {
			return nil, r.timeout()
		}
		if err := r.deliver(res); err != nil {
			return nil, err
		}
		if err := r.deliverReady(); err != nil {
			return nil, err
		}
		if err := r.dispatchQueued(); err != nil {
			return nil, err
		}
	}
}

// awaitResult waits for the next result of the calls in flight, false when
// the run's context ends first. When they are slow it puts the VM's heap
// away while it waits (see parkHeap).
func (r *run) awaitResult() (callResult, bool) {
	select {
	case res := <-r.results:
		return res, true
	case <-r.ctx.Done():
		return callResult{}, false
	default:
	}
	if r.parkTimer == nil {
		r.parkTimer = time.NewTimer(r.parkAfter())
	} else {
		r.parkTimer.Reset(r.parkAfter())
	}
	select {
	case res := <-r.results:
		r.parkTimer.Stop()
		return res, true
	case <-r.ctx.Done():
		r.parkTimer.Stop()
		return callResult{}, false
	case <-r.parkTimer.C:
	}
	// This goroutine faults into a panic, so a revoked heap needs no check.
	vm := r.m.vm
	heap := vm.Freeze()
	defer vm.Thaw(heap)
	select {
	case res := <-r.results:
		return res, true
	case <-r.ctx.Done():
		return callResult{}, false
	}
}

// deliverReady delivers the results that are already there, so that one
// pass of jobs serves them all.
func (r *run) deliverReady() error {
	for r.outcome == nil {
		select {
		case res := <-r.results:
			if err := r.deliver(res); err != nil {
				return err
			}
		default:
			return nil
		}
	}
	return nil
}

// drain runs the pending jobs (promise reactions), in one stretch of JS:
// code looping on microtasks is metered like code looping in a function
// (see enterJS), and the stretch is entered once rather than per job.
func (r *run) drain() error {
	if r.outcome != nil {
		return nil
	}
	vm := r.m.vm
	r.enterJS()
	n := 1
	for n == 1 && r.outcome == nil && r.ctx.Err() == nil {
		n = vm.RunJob()
	}
	r.leaveJS()
	switch {
	case n < 0:
		return r.exception()
	case n == 1 && r.outcome == nil: // stopped by the run's context
		return r.timeout()
	}
	return nil
}

// enterJS starts a stretch of JS on the goroutine driving the VM: the
// interrupt handler stops it at the run's deadline or when the CPU budget
// runs out, whichever comes first. The CPU budget counts the CPU time of
// the thread running the JS, so that waiting for a core on a busy machine
// costs the code nothing; where the system cannot tell, and for the first
// 100 µs of a stretch, it counts wall time instead (engine/interrupt.go).
func (r *run) enterJS() {
	wallLeft := time.Duration(math.MaxInt64)
	if d, ok := r.ctx.Deadline(); ok {
		wallLeft = time.Until(d)
	}
	r.m.vm.EnterJS(wallLeft, r.lim.CPUBudget-time.Duration(r.cpuUsed.Load()))
}

// leaveJS ends the stretch enterJS started.
func (r *run) leaveJS() {
	if r.cpuUsed.Add(int64(r.m.vm.LeaveJS())) >= int64(r.lim.CPUBudget) {
		r.cpuOut.Store(true)
	}
}

// cpuSpent is the CPU time the run spent running JS so far; any goroutine
// may ask. It reads the total before the stretch in progress: a stretch
// ending in between is missed for once rather than counted twice.
func (r *run) cpuSpent() time.Duration {
	spent := time.Duration(r.cpuUsed.Load())
	if r.m == nil { // the run ended before it had a VM
		return spent
	}
	return spent + r.m.vm.JSTime()
}

// finish records the outcome of the code and interrupts whatever else it
// queued: a run ends when its function settles.
func (r *run) finish(value json.RawMessage, err error) {
	if r.outcome != nil {
		return
	}
	r.outcome = &outcome{value: value, err: err}
	r.m.vm.Stop()
}

func unknownTool(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
	return nil, pmlerr.New(pmlerr.UnknownTool, "unknown tool %s", tool)
}

// errResultTooLarge is the CODE_ERROR for a return value over the limit.
func errResultTooLarge(n, limit int) error {
	return pmlerr.New(pmlerr.CodeError, "return value too large (%d bytes, limit %d)", n, limit)
}
