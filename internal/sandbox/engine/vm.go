package engine

import (
	"errors"
	"fmt"
	"math"
	"unsafe"

	"modernc.org/libc"
	lib "modernc.org/libquickjs"
)

// VM is one engine instance: a runtime with one context, its heap in an
// arena of its own. It is used by one goroutine at a time, except Stop,
// Revoke and Revoked, which any goroutine may call.
type VM struct {
	tls     *libc.TLS // the engine's emulated C stack
	rt      uintptr   // *lib.TJSRuntime
	ctx     uintptr   // *lib.TJSContext
	arena   *arena
	intr    *interrupter
	scratch uintptr  // memory for out-parameters (see value.go)
	host    HostFunc // what the host function calls (host.go)
}

// errRevoked is what an allocation of a revoked VM panics with.
var errRevoked = errors.New("engine: the VM's heap was revoked")

// maxStackSlots bounds JS recursion: about one slot per JS call, a few per
// level through built-ins. Each slot costs about 1 KiB of goroutine stack in
// the transpiled engine, so 2000 keeps a runaway recursion near 2 MiB of Go
// stack (the engine default of 5000 reaches 8 MiB) while allowing ~2000
// levels of JS recursion and JSON nesting.
const maxStackSlots = 2000

// New creates a VM whose heap can hold memoryLimit bytes.
func New(memoryLimit int64) (*VM, error) {
	a, err := arenas.get(memoryLimit)
	if err != nil {
		return nil, err
	}
	return newIn(a)
}

// newIn creates a VM whose heap is a.
func newIn(a *arena) (*VM, error) {
	a.clearStale(a.region.base)
	e := &VM{tls: cStacks.get(), arena: a, intr: newInterrupter()}
	e.rt = lib.XJS_NewRuntime2(e.tls, uintptr(unsafe.Pointer(&arenaMallocFunctions)), uintptr(unsafe.Pointer(a)))
	if e.rt == 0 {
		e.Close()
		return nil, fmt.Errorf("create a JS runtime")
	}
	a.rt = e.rt
	lib.XJS_SetMaxStackSize(e.tls, e.rt, maxStackSlots)
	lib.XJS_SetInterruptHandler(e.tls, e.rt, funcAddr(interruptHandler), uintptr(unsafe.Pointer(e.intr)))
	if e.ctx = lib.XJS_NewContext(e.tls, e.rt); e.ctx == 0 {
		e.Close()
		return nil, fmt.Errorf("create a JS context")
	}
	if e.scratch = a.alloc(scratchSize); e.scratch == 0 {
		e.Close()
		return nil, fmt.Errorf("allocate the engine's scratch memory")
	}
	return e, nil
}

// Close drops the VM. Its heap is the arena, so nothing in it is freed one
// object at a time: the arena is recycled whole (a revoked one unmapped).
func (e *VM) Close() {
	cStacks.put(e.tls, e.Revoked())
	arenas.put(e.arena)
}

// SetMemoryLimit sets the heap limit of the code to come. The engine needs
// some memory to report an error, so tiny limits are raised.
func (e *VM) SetMemoryLimit(n int64) {
	lib.XJS_SetMemoryLimit(e.tls, e.rt, lib.Tsize_t(max(n, 128<<10)))
}

// MemoryBytes returns the bytes the engine has allocated.
func (e *VM) MemoryBytes() int64 {
	return int64((*lib.TJSRuntime)(cPointer(e.rt)).Fmalloc_ctx.Fmalloc_state.Fmalloc_size)
}

// OutOfMemory reports whether an allocation of the engine ever failed.
func (e *VM) OutOfMemory() bool { return e.arena.failed }

// evalName is the file name of evaluated code in positions and stacks.
var evalName = [...]byte{'<', 'e', 'v', 'a', 'l', '>', 0}

// Compile compiles js as a global script to bytecode. On failure the
// exception is pending (TakeException). strip leaves out line tables and
// source text: the bytecode is a third of the size and loads in half the
// time, for code whose positions nobody reads.
func (e *VM) Compile(js string, strip bool) ([]byte, bool) {
	if strip { // JS_SetStripInfo
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

// EvalBytecode runs compiled code and returns its value, which the caller
// frees. On failure the value is an exception and the exception is pending.
func (e *VM) EvalBytecode(code []byte) Value { return Value{e.evalBytecode(code)} }

func (e *VM) evalBytecode(code []byte) lib.TJSValue {
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

// Call calls the JS function f with args (which it does not take over) and
// returns its value, which the caller frees; an exception is pending when
// it is one.
func (e *VM) Call(f Value, args ...Value) Value {
	size := len(args) * int(unsafe.Sizeof(lib.TJSValue{}))
	argv := e.tls.Alloc(size)
	defer e.tls.Free(size)
	for i, a := range args {
		*(*lib.TJSValue)(cPointer(argv + uintptr(i)*unsafe.Sizeof(lib.TJSValue{}))) = a.v
	}
	return Value{lib.XJS_Call(e.tls, e.ctx, f.v, jsUndefined, int32(len(args)), argv)}
}

// RunJob runs one pending job (a promise reaction): 0 when there was none,
// 1 when it ran, -1 when it threw (the exception is pending).
func (e *VM) RunJob() int {
	const size = int(unsafe.Sizeof(uintptr(0)))
	pctx := e.tls.Alloc(size) // where the engine puts the context of a failed job
	defer e.tls.Free(size)
	switch lib.XJS_ExecutePendingJob(e.tls, e.rt, pctx) {
	case 0:
		return 0
	case 1:
		return 1
	}
	return -1
}

// Stop makes the engine stop the code at its next poll of the interrupt
// handler, for good: every later entry into JS stops too.
func (e *VM) Stop() { e.intr.stop.Store(true) }

// Revoke makes every access to the VM's heap fault, from any goroutine. A
// built-in of the engine stuck in a loop that never polls the interrupt
// handler (includes over 2^32 holes, a sort) faults at its next read of the
// objects it walks; the goroutine running it, which must run with
// debug.SetPanicOnFault, then panics, unwinding the engine. After Revoke the
// VM only closes, and nothing may touch its values. It fails where the
// system cannot revoke memory.
func (e *VM) Revoke() error {
	e.arena.revoked.Store(true)
	return e.arena.region.revoke()
}

// Revoked reports whether Revoke was called: a panic of the goroutine
// running the VM is then the fault it causes.
func (e *VM) Revoked() bool { return e.arena.revoked.Load() }

// Fits reports whether the VM's heap can take code with this memory limit.
func (e *VM) Fits(memoryLimit int64) bool {
	return e.arena.region.size() >= int(memoryLimit)+arenaSlack
}

func isException(v lib.TJSValue) bool { return int32(v.Ftag) == lib.EJS_TAG_EXCEPTION }

// Value is an engine value. Who frees it is said where one is returned.
type Value struct{ v lib.TJSValue }

// Undefined is JS undefined.
var Undefined = Value{jsUndefined}

// Int is the JS number n, an int32.
func Int(n int) Value { return Value{jsInt(n)} }

// Float is the number f.
func Float(f float64) Value {
	return Value{lib.TJSValue{Ftag: lib.EJS_TAG_FLOAT64, Fu: lib.TJSValueUnion{Fuint641: math.Float64bits(f)}}}
}

// IsException reports whether a call returned an exception (pending).
func (v Value) IsException() bool { return isException(v.v) }

// IsNullish reports whether v is undefined or null.
func (v Value) IsNullish() bool {
	t := int32(v.v.Ftag)
	return t == lib.EJS_TAG_UNDEFINED || t == lib.EJS_TAG_NULL
}

// IsString reports whether v is a string.
func (v Value) IsString() bool {
	t := int32(v.v.Ftag)
	return t == lib.EJS_TAG_STRING || t == lib.EJS_TAG_STRING_ROPE
}

// Free drops the caller's reference to v.
func (e *VM) Free(v Value) { e.free(v.v) }

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
