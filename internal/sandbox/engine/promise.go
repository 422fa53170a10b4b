package engine

import (
	"unsafe"

	"modernc.org/libc"
	lib "modernc.org/libquickjs"
)

// NewPromise makes a promise and its resolving functions; the caller frees
// all three. ok is false when the engine ran out of memory.
func (e *VM) NewPromise() (promise, resolve, reject Value, ok bool) {
	funcs := e.scratch
	p := lib.XJS_NewPromiseCapability(e.tls, e.ctx, funcs)
	if isException(p) {
		e.clearException()
		return Value{p}, Undefined, Undefined, false
	}
	return Value{p}, Value{jsArg(funcs, 0)}, Value{jsArg(funcs, 1)}, true
}

// ParseJSON parses text into a value the caller frees, or an exception value
// with the exception pending (text nested too deep). name is the "file" of
// its errors.
func (e *VM) ParseJSON(text []byte, name string) Value {
	// The engine's parser reads up to a terminating NUL; the name follows.
	size := len(text) + 1 + len(name) + 1
	buf := libc.Xmalloc(e.tls, lib.Tsize_t(size))
	if buf == 0 {
		return Value{lib.XJS_ThrowOutOfMemory(e.tls, e.ctx)}
	}
	defer libc.Xfree(e.tls, buf)
	b := unsafe.Slice((*byte)(cPointer(buf)), size)
	n := copy(b, text)
	b[n] = 0
	b[n+1+copy(b[n+1:], name)] = 0
	return Value{lib.XJS_ParseJSON(e.tls, e.ctx, buf, lib.Tsize_t(len(text)), buf+uintptr(n)+1)}
}
