package sandbox

import (
	"fmt"
	"reflect"
	"sync"
	"unsafe"

	"modernc.org/libc"
	lib "modernc.org/libquickjs"
	"modernc.org/quickjs"
)

// This file reaches under modernc.org/quickjs into its engine, for what the
// wrapper does not offer or offers at too high a price:
//
//   - the engine's memory accounting, for Result.MemoryBytes;
//   - a reliable out-of-memory signal. When an allocation fails near the
//     limit, the engine often cannot allocate the InternalError either and
//     throws null instead, which looks exactly like user code doing
//     `throw null`; and by the time the error reaches Go the memory is freed
//     again. So the runtime's allocator is wrapped: a failed allocation sets a
//     sticky flag in the runtime's malloc state (its opaque word, which the
//     default allocator never uses);
//   - the way between the bridge and Go (host.go, jscalls.go, jsvalue.go):
//     the wrapper converts every argument and result through reflect, which
//     cost more than half of an mcp.* round trip.
//
// The engine's pointers are read with reflect from the unexported fields
// VM.cContext, VM.runtime.cRuntime and VM.runtime.tls. The hooks use the
// calling convention of the transpiled engine, where a C function pointer is
// the address of a Go func value. TestEngineInternals checks all of this
// against the pinned versions.

// engine is the part of one VM's runtime this package reads and hooks. Like
// the VM, it is used by one goroutine at a time.
type engine struct {
	state   *lib.TJSMallocState
	tls     *libc.TLS // the VM's: the engine's emulated C stack
	ctx     uintptr   // *lib.TJSContext
	rt      uintptr   // *lib.TJSRuntime
	scratch uintptr   // C memory for out-parameters (see jsvalue.go)
}

// allocFuncs are the engine's default allocation functions, as func-value
// addresses, read once from a throwaway runtime.
type allocFuncs struct{ malloc, realloc uintptr }

var defaultAllocFuncs = sync.OnceValues(func() (allocFuncs, error) {
	vm, err := quickjs.NewVM()
	if err != nil {
		return allocFuncs{}, fmt.Errorf("create a VM to read the allocator: %w", err)
	}
	defer vm.Close()
	rt, err := runtimeOf(vm)
	if err != nil {
		return allocFuncs{}, err
	}
	return allocFuncs{malloc: rt.Fmalloc_ctx.Fmf.Fjs_malloc, realloc: rt.Fmalloc_ctx.Fmf.Fjs_realloc}, nil
})

// runtimeOf returns the engine runtime of vm.
func runtimeOf(vm *quickjs.VM) (*lib.TJSRuntime, error) {
	e, err := engineOf(vm)
	if err != nil {
		return nil, err
	}
	return (*lib.TJSRuntime)(cPointer(e.rt)), nil
}

// engineOf reads vm's engine pointers.
func engineOf(vm *quickjs.VM) (engine, error) {
	v := reflect.ValueOf(vm).Elem()
	c := v.FieldByName("cContext")
	if c.Kind() != reflect.Uintptr || c.Uint() == 0 {
		return engine{}, fmt.Errorf("quickjs.VM has no cContext field this package knows")
	}
	r := v.FieldByName("runtime")
	if r.Kind() != reflect.Pointer || r.IsNil() {
		return engine{}, fmt.Errorf("quickjs.VM has no runtime field this package knows")
	}
	rt := r.Elem().FieldByName("cRuntime")
	if rt.Kind() != reflect.Uintptr || rt.Uint() == 0 {
		return engine{}, fmt.Errorf("quickjs runtime has no cRuntime field this package knows")
	}
	tls := r.Elem().FieldByName("tls")
	if tls.Kind() != reflect.Pointer || tls.Type().Elem() != reflect.TypeFor[libc.TLS]() || tls.IsNil() {
		return engine{}, fmt.Errorf("quickjs runtime has no tls field this package knows")
	}
	return engine{tls: (*libc.TLS)(tls.UnsafePointer()), ctx: uintptr(c.Uint()), rt: uintptr(rt.Uint())}, nil
}

// engineValue is the engine's value under v, which v keeps owning.
func engineValue(v *quickjs.Value) (lib.TJSValue, error) {
	f := reflect.ValueOf(v).Elem().FieldByName("v")
	if !f.IsValid() || f.Type() != reflect.TypeFor[lib.TJSValue]() {
		return lib.TJSValue{}, fmt.Errorf("quickjs.Value has no v field this package knows")
	}
	return *(*lib.TJSValue)(unsafe.Pointer(f.UnsafeAddr())), nil
}

// hookEngine installs the out-of-memory tracking allocator in vm's runtime.
// It must run before vm executes any code.
func hookEngine(vm *quickjs.VM) (engine, error) {
	def, err := defaultAllocFuncs()
	if err != nil {
		return engine{}, err
	}
	e, err := engineOf(vm)
	if err != nil {
		return engine{}, err
	}
	rt := (*lib.TJSRuntime)(cPointer(e.rt))
	mf := &rt.Fmalloc_ctx.Fmf
	if mf.Fjs_malloc != def.malloc || mf.Fjs_realloc != def.realloc {
		return engine{}, fmt.Errorf("quickjs runtime does not use the default allocator")
	}
	mf.Fjs_malloc = funcAddr(trackingMalloc)
	mf.Fjs_realloc = funcAddr(trackingRealloc)
	e.state = &rt.Fmalloc_ctx.Fmalloc_state
	if e.scratch = libc.Xmalloc(e.tls, scratchSize); e.scratch == 0 {
		return engine{}, fmt.Errorf("allocate the engine's scratch memory")
	}
	return e, nil
}

// memoryBytes returns the bytes the engine has allocated.
func (e engine) memoryBytes() int64 { return int64(e.state.Fmalloc_size) }

// outOfMemory reports whether an allocation of the engine ever failed.
func (e engine) outOfMemory() bool { return e.state.Fopaque != 0 }

type (
	mallocFunc  = func(tls *libc.TLS, s uintptr, size lib.Tsize_t) uintptr
	reallocFunc = func(tls *libc.TLS, s, ptr uintptr, size lib.Tsize_t) uintptr
)

// trackingMalloc is the engine's malloc with the sticky failure flag. The
// engine calls it as js_malloc(state, size).
func trackingMalloc(tls *libc.TLS, s uintptr, size lib.Tsize_t) uintptr {
	def, _ := defaultAllocFuncs() // hooks are installed only when this succeeded
	p := (*(*mallocFunc)(unsafe.Pointer(&def.malloc)))(tls, s, size)
	if p == 0 && size != 0 {
		(*lib.TJSMallocState)(cPointer(s)).Fopaque = 1
	}
	return p
}

// trackingRealloc is the engine's realloc with the sticky failure flag.
// realloc(p, 0) frees and returns 0, which is not a failure.
func trackingRealloc(tls *libc.TLS, s, ptr uintptr, size lib.Tsize_t) uintptr {
	def, _ := defaultAllocFuncs()
	p := (*(*reallocFunc)(unsafe.Pointer(&def.realloc)))(tls, s, ptr, size)
	if p == 0 && size != 0 {
		(*lib.TJSMallocState)(cPointer(s)).Fopaque = 1
	}
	return p
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
