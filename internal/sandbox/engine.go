package sandbox

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"
	"unsafe"

	"modernc.org/libc"
	lib "modernc.org/libquickjs"
)

// This package drives the QuickJS engine (modernc.org/libquickjs, QuickJS
// transpiled to Go) through its C API directly. The runtime is created with
// this package's allocator (arena.go), so that a VM's whole heap is one
// region that can be revoked at a run's end; the interrupt handler enforces
// the run's deadline and CPU budget (interrupt.go); and the bridge reaches Go
// through one C function (host.go) whose arguments are read without any
// conversion layer (jscalls.go, jsvalue.go, argsjson.go).
//
// What this relies on besides the public C API, checked by
// TestEngineInternals against the pinned version:
//
//   - the layout of JSRuntime (its malloc state, current_exception, the
//     in_out_of_memory bit, strip_flags) and JSContext (global_obj,
//     class_proto), read as the transpiled structs;
//   - the transpiled calling convention: a C function pointer is the address
//     of a Go func value, static for a top-level function.

// engine is one VM: a runtime with one context, its heap in an arena. Like
// the VM, it is used by one goroutine at a time, except intr.
type engine struct {
	tls     *libc.TLS // the engine's emulated C stack
	rt      uintptr   // *lib.TJSRuntime
	ctx     uintptr   // *lib.TJSContext
	arena   *arena
	intr    *interrupter
	scratch uintptr // memory for out-parameters (see jsvalue.go)
}

// errRevoked is what an allocation of a revoked VM panics with.
var errRevoked = errors.New("sandbox: the VM's heap was revoked")

// maxStackSlots bounds JS recursion: about one slot per JS call, a few per
// level through built-ins. Each slot costs about 1 KiB of goroutine stack in
// the transpiled engine, so 2000 keeps a runaway recursion near 2 MiB of Go
// stack (the engine default of 5000 reaches 8 MiB) while allowing ~2000
// levels of JS recursion and JSON nesting.
const maxStackSlots = 2000

// newEngine creates a VM whose heap can hold memoryLimit bytes.
func newEngine(memoryLimit int64) (*engine, error) {
	a, err := arenas.get(memoryLimit)
	if err != nil {
		return nil, err
	}
	e := &engine{tls: libc.NewTLS(), arena: a, intr: &interrupter{}}
	e.intr.deadline.Store(neverDeadline)
	e.rt = lib.XJS_NewRuntime2(e.tls, uintptr(unsafe.Pointer(&arenaMallocFunctions)), uintptr(unsafe.Pointer(a)))
	if e.rt == 0 {
		e.close()
		return nil, fmt.Errorf("create a JS runtime")
	}
	a.rt = e.rt
	lib.XJS_SetMaxStackSize(e.tls, e.rt, maxStackSlots)
	lib.XJS_SetInterruptHandler(e.tls, e.rt, funcAddr(interruptHandler), uintptr(unsafe.Pointer(e.intr)))
	if e.ctx = lib.XJS_NewContext(e.tls, e.rt); e.ctx == 0 {
		e.close()
		return nil, fmt.Errorf("create a JS context")
	}
	if e.scratch = a.alloc(scratchSize); e.scratch == 0 {
		e.close()
		return nil, fmt.Errorf("allocate the engine's scratch memory")
	}
	return e, nil
}

// close drops the VM. Its heap is the arena, so nothing in it is freed one
// object at a time: the arena is recycled whole.
func (e *engine) close() {
	e.tls.Close()
	arenas.put(e.arena)
}

// setMemoryLimit sets the heap limit of the runs to come. The engine needs
// some memory to report an error, so tiny limits are raised.
func (e *engine) setMemoryLimit(n int64) {
	lib.XJS_SetMemoryLimit(e.tls, e.rt, lib.Tsize_t(max(n, 128<<10)))
}

// memoryBytes returns the bytes the engine has allocated.
func (e *engine) memoryBytes() int64 {
	return int64((*lib.TJSRuntime)(cPointer(e.rt)).Fmalloc_ctx.Fmalloc_state.Fmalloc_size)
}

// outOfMemory reports whether an allocation of the engine ever failed.
func (e *engine) outOfMemory() bool { return e.arena.failed }

// evalName is the file name of evaluated code in positions and stacks.
var evalName = [...]byte{'<', 'e', 'v', 'a', 'l', '>', 0}

// compile compiles js as a global script to bytecode. On failure the
// exception is pending.
func (e *engine) compile(js string, strip bool) ([]byte, bool) {
	if strip {
		// Without line tables and source text bytecode is a third of the
		// size and loads in half the time (JS_SetStripInfo).
		rt := (*lib.TJSRuntime)(cPointer(e.rt))
		prev := rt.Fstrip_flags
		rt.Fstrip_flags = lib.MJS_STRIP_SOURCE | lib.MJS_STRIP_DEBUG
		defer func() { rt.Fstrip_flags = prev }()
	}
	src := libc.Xmalloc(e.tls, lib.Tsize_t(len(js)+1))
	if src == 0 {
		lib.XJS_ThrowOutOfMemory(e.tls, e.ctx)
		return nil, false
	}
	defer libc.Xfree(e.tls, src)
	b := unsafe.Slice((*byte)(cPointer(src)), len(js)+1)
	b[copy(b, js)] = 0
	fn := lib.XJS_Eval(e.tls, e.ctx, src, lib.Tsize_t(len(js)), uintptr(unsafe.Pointer(&evalName)), lib.MJS_EVAL_TYPE_GLOBAL|lib.MJS_EVAL_FLAG_COMPILE_ONLY)
	if isException(fn) {
		return nil, false
	}
	defer e.free(fn)
	plen := e.scratch
	p := lib.XJS_WriteObject(e.tls, e.ctx, plen, fn, lib.MJS_WRITE_OBJ_BYTECODE)
	if p == 0 {
		return nil, false
	}
	code := make([]byte, *(*lib.Tsize_t)(cPointer(plen)))
	copy(code, unsafe.Slice((*byte)(cPointer(p)), len(code)))
	lib.Xjs_free(e.tls, e.ctx, p)
	return code, true
}

// evalBytecode runs compiled code and returns its value. On failure the
// value is an exception and the exception is pending.
func (e *engine) evalBytecode(code []byte) lib.TJSValue {
	buf := libc.Xmalloc(e.tls, lib.Tsize_t(len(code)))
	if buf == 0 {
		return lib.XJS_ThrowOutOfMemory(e.tls, e.ctx)
	}
	defer libc.Xfree(e.tls, buf)
	copy(unsafe.Slice((*byte)(cPointer(buf)), len(code)), code)
	obj := lib.XJS_ReadObject(e.tls, e.ctx, buf, lib.Tsize_t(len(code)), lib.MJS_READ_OBJ_BYTECODE)
	if isException(obj) {
		return obj
	}
	return lib.XJS_EvalFunction(e.tls, e.ctx, obj) // takes obj over
}

// call calls the JS function f with args and returns its value, which the
// caller frees; an exception is pending when it is one.
func (e *engine) call(f lib.TJSValue, args ...lib.TJSValue) lib.TJSValue {
	size := len(args) * int(unsafe.Sizeof(lib.TJSValue{}))
	argv := e.tls.Alloc(size)
	defer e.tls.Free(size)
	for i, a := range args {
		*(*lib.TJSValue)(cPointer(argv + uintptr(i)*unsafe.Sizeof(lib.TJSValue{}))) = a
	}
	return lib.XJS_Call(e.tls, e.ctx, f, jsUndefined, int32(len(args)), argv)
}

func isException(v lib.TJSValue) bool { return int32(v.Ftag) == lib.EJS_TAG_EXCEPTION }

// interrupter tells the engine's interrupt handler when to stop the code:
// at once once stop is set (from any goroutine), or at deadline, a
// monotonic time the goroutine driving the VM sets on each entry into JS.
type interrupter struct {
	stop     atomic.Bool
	deadline atomic.Int64
}

// neverDeadline is a deadline that never comes.
const neverDeadline = int64(^uint64(0) >> 1)

// monotonicBase anchors monotonic: time.Since reads the monotonic clock, so
// setting the system clock moves no deadline.
var monotonicBase = time.Now()

func monotonic() int64 { return int64(time.Since(monotonicBase)) }

// interruptHandler is the engine's interrupt handler: it polls it every few
// thousand bytecodes, and a non-zero answer throws an uncatchable
// InternalError "interrupted".
func interruptHandler(tls *libc.TLS, rt, opaque uintptr) int32 {
	i := (*interrupter)(cPointer(opaque))
	if i.stop.Load() || monotonic() >= i.deadline.Load() {
		return 1
	}
	return 0
}

// funcAddr returns what the transpiled engine takes as a C function pointer:
// the address of the func value, static for a top-level function.
func funcAddr[F any](f F) uintptr {
	return *(*uintptr)(unsafe.Pointer(&f))
}

// cPointer turns an address in the engine's C heap (not the Go heap) into a
// pointer.
func cPointer(p uintptr) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&p))
}
