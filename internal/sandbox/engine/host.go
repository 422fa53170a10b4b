package engine

import (
	"fmt"
	"unsafe"

	"modernc.org/libc"
	lib "modernc.org/libquickjs"
)

// HostFunc serves the host function: op is its first argument (an int), a
// and b the others, which it does not own. It returns a value the engine
// takes over. It must not panic: a panic would unwind the engine's frames.
type HostFunc func(op int, a, b Value) Value

// InstallHost defines the global function name(op, a, b), which calls fn.
// The code reaching Go through one C function of the engine, rather than a
// generic conversion layer, is most of what makes a call from JS cheap.
func (e *VM) InstallHost(name string, fn HostFunc) error {
	e.host = fn
	// The context leads to the VM: Go does not move heap objects, and the
	// VM outlives its context.
	lib.XJS_SetContextOpaque(e.tls, e.ctx, uintptr(unsafe.Pointer(e)))
	return e.defineHost(name, 3, 0)
}

// InstallHostOp defines the global function name(), which calls the
// function InstallHost installed with op (not 0) and undefined arguments.
// It is for a built-in the bridge replaces on a hot path (the clock): a
// JS wrapper around the host function would cost a JS call more.
func (e *VM) InstallHostOp(name string, op int) error {
	if op == 0 || op != int(int32(op)) {
		return fmt.Errorf("host op %d of %s", op, name)
	}
	return e.defineHost(name, 0, int32(op))
}

func (e *VM) defineHost(name string, argc, magic int32) error {
	cname, err := libc.CString(name)
	if err != nil {
		return err
	}
	defer libc.Xfree(e.tls, cname)
	f := lib.XJS_NewCFunction2(e.tls, e.ctx, funcAddr(hostFromJS), cname, argc, lib.EJS_CFUNC_generic_magic, magic)
	if isException(f) {
		e.clearException()
		return fmt.Errorf("create %s", name)
	}
	// JS_SetPropertyStr takes f over, also when it fails.
	if lib.XJS_SetPropertyStr(e.tls, e.ctx, (*lib.TJSContext)(cPointer(e.ctx)).Fglobal_obj, cname, f) < 0 {
		e.clearException()
		return fmt.Errorf("define %s", name)
	}
	return nil
}

// hostFromJS is the host function the engine calls; magic is the op of a
// function InstallHostOp defined, else 0.
func hostFromJS(tls *libc.TLS, ctx uintptr, this lib.TJSValue, argc int32, argv uintptr, magic int32) lib.TJSValue {
	e := (*VM)(cPointer(lib.XJS_GetContextOpaque(tls, ctx)))
	if e.host == nil {
		return jsInt(-1)
	}
	if magic != 0 {
		return e.host(int(magic), Undefined, Undefined).v
	}
	if argc != 3 {
		return jsInt(-1)
	}
	op := jsArg(argv, 0)
	if int32(op.Ftag) != lib.EJS_TAG_INT {
		return jsInt(-1)
	}
	return e.host(int(int32(op.Fu.Fuint641)), Value{jsArg(argv, 1)}, Value{jsArg(argv, 2)}).v
}
