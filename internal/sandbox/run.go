package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"runtime/debug"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/pml-go/pml/internal/lru"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/tools"
	lib "modernc.org/libquickjs"
	"modernc.org/quickjs"
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
	r := &run{
		parent:   ctx,
		started:  time.Now(),
		call:     call,
		lim:      lim,
		finished: make(chan struct{}),
		results:  make(chan callResult, maxConcurrentCalls),
		jobs:     make(chan callJob),
		done:     make(chan runOutput, 1),
	}
	if err := ctx.Err(); err != nil {
		return Result{}, r.timeout()
	}
	m, err := machines.get()
	if err != nil {
		return Result{}, &pmlerr.Error{Code: pmlerr.Internal, Message: "cannot create a JS VM", Err: err}
	}
	r.ctx, r.cancel = context.WithTimeout(ctx, lim.Timeout)
	r.m, m.run = m, r

	// The VM runs on its own goroutine so that Run can answer at the
	// deadline even when the engine is inside one long built-in call, which
	// it cannot interrupt (see timeoutGrace). The goroutine also takes the
	// engine's deep recursion off the caller's stack.
	go r.start(js, argsText)
	select {
	case out := <-r.done:
		return r.cleanup(out)
	case <-r.ctx.Done():
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
	slog.Warn("sandbox: code did not stop at its deadline; its VM ends when the built-in it runs returns", "grace", timeoutGrace)
	return Result{}, r.timeout()
}

// start is the body of the VM goroutine.
func (r *run) start(js, argsText string) {
	growStack()
	r.stopWatch = r.watch()
	r.drive(func() (json.RawMessage, error) { return r.execute(js, argsText) })
}

// drive runs f, which drives the VM until the code has an outcome, and ends
// the run with it, unless another goroutine took the run over meanwhile.
func (r *run) drive(f func() (json.RawMessage, error)) {
	value, err := r.guard(f)
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
	out := runOutput{res: Result{Logs: r.logs, LogsTruncated: r.logsTruncated, MemoryBytes: r.m.engine.memoryBytes()}, value: value, err: err}
	if r.claimed.CompareAndSwap(false, true) {
		// Run takes it. This goroutine ends right after, so that Run
		// resumes on this thread rather than waiting for another to wake.
		r.done <- out
		return
	}
	r.cleanup(out)
}

// cleanup releases what the run holds once the VM stopped for good, and
// returns its output.
func (r *run) cleanup(out runOutput) (Result, error) {
	close(r.finished) // call goroutines stop delivering
	r.cancel()        // and their contexts end
	machines.put(r.m)
	return out.result()
}

// guard runs f, turning a panic into an INTERNAL_ERROR.
func (r *run) guard(f func() (json.RawMessage, error)) (value json.RawMessage, err error) {
	defer func() {
		if p := recover(); p != nil {
			slog.Error("sandbox: panic while running code", "panic", p, "stack", string(debug.Stack()))
			value, err = nil, pmlerr.New(pmlerr.Internal, "sandbox failure: %v", p)
		}
	}()
	return f()
}

// timeoutGrace is how long after the deadline Run waits for the VM to stop.
// The engine checks for interrupts between bytecodes, not inside a built-in:
// one call like replaceAll or sort over a heap of tens of MiB can take most
// of a second. Past the grace, Run returns EXECUTION_TIMEOUT and leaves the
// VM to stop and close itself when that call returns.
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

// stackReserve is about what running a small snippet takes: of 16 to 128
// KiB, 64 gave the lowest latency for a pooled run.
const stackReserve = 64 << 10

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
	lim      Limits
	m        *machine
	finished chan struct{}              // closed when the run is over
	results  chan callResult            // call goroutines -> VM goroutine
	jobs     chan callJob               // VM goroutine -> idle call workers (unbuffered)
	done     chan runOutput             // the goroutine ending the run -> Run
	claimed  atomic.Bool                // set by the first of: the VM ending the run, Run giving up at the deadline
	inline   atomic.Pointer[inlineCall] // the call the VM goroutine is making, if any

	// The rest belongs to the goroutine driving the VM: the one Run
	// started, or the one that took over from it (see callInline).
	stopWatch     func()
	queued        []callJob // calls the code made, not started yet
	seq           int       // issue position of the next call
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
	if t[0] != '{' || !json.Valid(t) {
		return "", pmlerr.New(pmlerr.InvalidRequest, "args must be a JSON object")
	}
	return string(t), nil
}

// watch interrupts the VM once the run's context ends, and takes the run
// over from a CallFunc holding the VM goroutine. The engine clears a
// pending interrupt each time Go calls into JS, so the interrupt is repeated
// until Run returns; the eval timeout set in enter covers the deadline on
// its own.
func (r *run) watch() (stop func()) {
	done := make(chan struct{})
	vm := r.m.vm
	stopAfter := context.AfterFunc(r.ctx, func() {
		if c := r.inline.Load(); c != nil {
			r.abandon(c, r.timeout())
		}
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			vm.Interrupt()
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	})
	return func() {
		stopAfter()
		close(done)
	}
}

// execute compiles and starts the code, then runs the event loop.
func (r *run) execute(js, argsText string) (json.RawMessage, error) {
	vm := r.m.vm
	vm.SetMemoryLimit(uintptr(r.lim.MemoryBytes))
	var fn quickjs.Value
	err := r.enterMapped(func() (err error) {
		fn, err = r.load(js)
		return err
	}, r.compileError)
	if err != nil {
		return nil, err
	}
	err = r.enter(func() error {
		_, err := r.m.control.Call(quickjs.UndefinedValue, controlStart, fn, argsText)
		return err
	})
	if fn.VM() != nil {
		fn.Free() // the bridge holds the function now
	}
	if err != nil {
		return nil, err
	}
	return r.loop()
}

// load evaluates js to its function, through the process's cache of
// compiled code: AI clients and capabilities send the same code again and
// again, and loading bytecode takes a fraction of compiling.
func (r *run) load(js string) (quickjs.Value, error) {
	code, ok := compiled.Get(js)
	if !ok {
		var err error
		if code, err = r.m.vm.Compile(js, quickjs.EvalGlobal); err != nil {
			return quickjs.Value{}, err
		}
		code = compiled.Add(js, code, len(js)+len(code))
	}
	return r.m.vm.EvalBytecodeValue(code)
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
		select {
		case res := <-r.results:
			if err := r.deliver(res); err != nil {
				return nil, err
			}
			if err := r.deliverReady(); err != nil {
				return nil, err
			}
			if err := r.dispatchQueued(); err != nil {
				return nil, err
			}
		case <-r.ctx.Done():
			return nil, r.timeout()
		}
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

// drain runs the pending jobs (promise reactions). The eval timeout the
// wrapper set when the code started still holds: it is the run's deadline.
func (r *run) drain() error {
	e := &r.m.engine
	const size = int(unsafe.Sizeof(uintptr(0)))
	pctx := e.tls.Alloc(size) // where the engine puts the context of a failed job
	defer e.tls.Free(size)
	for r.outcome == nil {
		if r.ctx.Err() != nil {
			return r.timeout()
		}
		switch lib.XJS_ExecutePendingJob(e.tls, e.rt, pctx) {
		case 0:
			return nil
		case 1:
		default:
			return r.exception()
		}
	}
	return nil
}

// enter calls into JS with the eval timeout set to what is left of the run.
func (r *run) enter(f func() error) error {
	return r.enterMapped(f, r.engineError)
}

// enterMapped is enter with the mapping of engine errors to run errors.
func (r *run) enterMapped(f func() error, mapErr func(error) error) error {
	if r.outcome != nil {
		return nil
	}
	deadline, _ := r.ctx.Deadline()
	left := time.Until(deadline)
	if r.ctx.Err() != nil || left <= 0 {
		return r.timeout()
	}
	_ = r.m.vm.SetEvalTimeout(left)
	err := f()
	if r.outcome != nil || err == nil {
		// Once the code has an outcome the run interrupts the VM itself.
		return nil
	}
	return mapErr(err)
}

// finish records the outcome of the code and interrupts whatever else it
// queued: a run ends when its function settles.
func (r *run) finish(value json.RawMessage, err error) {
	if r.outcome != nil {
		return
	}
	r.outcome = &outcome{value: value, err: err}
	r.m.vm.Interrupt()
}

func unknownTool(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
	return nil, pmlerr.New(pmlerr.UnknownTool, "unknown tool %s", tool)
}

// errResultTooLarge is the CODE_ERROR for a return value over the limit.
func errResultTooLarge(n, limit int) error {
	return pmlerr.New(pmlerr.CodeError, "return value too large (%d bytes, limit %d)", n, limit)
}
