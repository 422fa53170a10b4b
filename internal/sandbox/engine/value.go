package engine

import (
	"unsafe"

	"modernc.org/libc"
	lib "modernc.org/libquickjs"
)

// Engine values (see engine.go). Every function
// here runs on the goroutine driving the VM and runs no JS code, unless it
// says so.

// scratchSize is the size of engine.scratch, where engine functions write
// their out-parameters: a property descriptor, a length, a table pointer.
// Each use reads them back at once, before anything else can use it, so one
// block per VM serves them all without an allocation per call.
const scratchSize = 128

// The largest use must fit (the constant underflows otherwise).
const _ = scratchSize - unsafe.Sizeof(lib.TJSPropertyDescriptor{})

var jsUndefined = lib.TJSValue{Ftag: lib.EJS_TAG_UNDEFINED}

func jsInt(n int) lib.TJSValue {
	return lib.TJSValue{Ftag: lib.EJS_TAG_INT, Fu: lib.TJSValueUnion{Fuint641: uint64(uint32(int32(n)))}}
}

// jsArg is argument i of a C function's argv.
func jsArg(argv uintptr, i int) lib.TJSValue {
	return *(*lib.TJSValue)(cPointer(argv + uintptr(i)*unsafe.Sizeof(lib.TJSValue{})))
}

// objectPointer is the JSObject of a value tagged EJS_TAG_OBJECT.
func objectPointer(v lib.TJSValue) uintptr { return uintptr(v.Fu.Fuint641) }

func (e *VM) free(v lib.TJSValue) { lib.XFreeValue(e.tls, e.ctx, v) }

// clearException drops the exception a failed engine call left pending, so
// that the code does not see it.
func (e *VM) clearException() { e.free(lib.XJS_GetException(e.tls, e.ctx)) }

// classProto is the context's prototype for objects of a class.
func (e *VM) classProto(class uintptr) uintptr {
	protos := (*lib.TJSContext)(cPointer(e.ctx)).Fclass_proto
	return objectPointer(*(*lib.TJSValue)(cPointer(protos + class*unsafe.Sizeof(lib.TJSValue{}))))
}

// goString copies the JS string v out as UTF-8. A lone surrogate comes out
// as invalid UTF-8. It fails only when the engine runs out of memory.
func (e *VM) goString(v lib.TJSValue) (string, bool) {
	var s string
	ok := e.withCString(v, func(b []byte) { s = string(b) })
	return s, ok
}

// withCString calls f with the UTF-8 bytes of the JS string v, valid during
// the call.
func (e *VM) withCString(v lib.TJSValue, f func([]byte)) bool {
	return e.withUTF8(func(plen uintptr) uintptr { return lib.XJS_ToCStringLen2(e.tls, e.ctx, plen, v, 0) }, f)
}

// withAtomString is withCString for a property name.
func (e *VM) withAtomString(atom lib.TJSAtom, f func([]byte)) bool {
	return e.withUTF8(func(plen uintptr) uintptr { return lib.XJS_AtomToCStringLen(e.tls, e.ctx, plen, atom) }, f)
}

// withUTF8 calls f with the bytes of the C string toC makes, which it
// reports the length of at plen.
func (e *VM) withUTF8(toC func(plen uintptr) uintptr, f func([]byte)) bool {
	plen := e.scratch
	p := toC(plen)
	if p == 0 {
		e.clearException()
		return false
	}
	f(unsafe.Slice((*byte)(cPointer(p)), *(*lib.Tsize_t)(cPointer(plen))))
	lib.XJS_FreeCString(e.tls, e.ctx, p)
	return true
}

// hasOwn reports whether the ordinary object obj has its own property atom,
// without running any code. An engine failure counts as having it.
func (e *VM) hasOwn(obj uintptr, atom lib.TJSAtom) bool {
	r := lib.XJS_GetOwnProperty(e.tls, e.ctx, 0, objectValue(obj), atom)
	if r < 0 {
		e.clearException()
	}
	return r != 0
}

// objectValue is the value of the JSObject at p, not counted as a reference.
func objectValue(p uintptr) lib.TJSValue {
	return lib.TJSValue{Ftag: lib.EJS_TAG_OBJECT, Fu: lib.TJSValueUnion{Fuint641: uint64(p)}}
}

// ownData returns the value of the own data property atom of the ordinary
// object or array obj, without running any code; ok is false for a missing
// property or an accessor. The caller frees the value.
func (e *VM) ownData(obj uintptr, atom lib.TJSAtom) (v lib.TJSValue, ok bool) {
	p := e.scratch
	switch lib.XJS_GetOwnProperty(e.tls, e.ctx, p, objectValue(obj), atom) {
	case 1:
	case 0:
		return v, false
	default:
		e.clearException()
		return v, false
	}
	d := (*lib.TJSPropertyDescriptor)(cPointer(p))
	if d.Fflags&lib.MJS_PROP_GETSET != 0 {
		e.free(d.Fgetter)
		e.free(d.Fsetter)
		e.free(d.Fvalue)
		return v, false
	}
	return d.Fvalue, true
}

// indexAtom is the atom of an array index below 2^31: the index tagged, as
// the engine's __JS_AtomFromUInt32 makes it.
func indexAtom(i uint32) lib.TJSAtom { return lib.TJSAtom(i | 1<<31) }

const (
	atomLength = lib.EJS_ATOM_length
	atomToJSON = lib.EJS_ATOM_toJSON
)

// stringProp reads a string property of an error object, at most max
// bytes of it; "" when it is missing or not a string. A getter would run.
func (e *VM) stringProp(obj lib.TJSValue, name string, max int) string {
	cname, err := libc.CString(name)
	if err != nil {
		return ""
	}
	defer libc.Xfree(e.tls, cname)
	v := lib.XJS_GetPropertyStr(e.tls, e.ctx, obj, cname)
	defer e.free(v)
	switch int32(v.Ftag) {
	case lib.EJS_TAG_STRING, lib.EJS_TAG_STRING_ROPE:
		return e.cappedString(v, max)
	case lib.EJS_TAG_EXCEPTION:
		e.clearException()
	}
	return ""
}

// cappedString copies out at most max bytes of the JS string v, plus one
// more when it is longer, so that the caller sees there was more.
func (e *VM) cappedString(v lib.TJSValue, max int) string {
	var s string
	e.withCString(v, func(b []byte) { s = string(b[:min(len(b), max+1)]) })
	return s
}

// intProp reads an integer property of an error object; 0 when it is
// missing or not an int.
func (e *VM) intProp(obj lib.TJSValue, name string) int {
	cname, err := libc.CString(name)
	if err != nil {
		return 0
	}
	defer libc.Xfree(e.tls, cname)
	v := lib.XJS_GetPropertyStr(e.tls, e.ctx, obj, cname)
	defer e.free(v)
	switch int32(v.Ftag) {
	case lib.EJS_TAG_INT:
		return int(int32(v.Fu.Fuint641))
	case lib.EJS_TAG_EXCEPTION:
		e.clearException()
	}
	return 0
}

// Exception describes what a call into the engine threw.
type Exception struct {
	Name, Message, Stack string
	Null                 bool // the value was null, which is also how the engine reports running out of memory
	Line, Column         int  // of a SyntaxError, 1-based; 0 when unknown
}

// TakeException takes the pending exception and describes it, each text cut
// to maxText bytes (one byte more when there was more). Getters of an error
// object run.
func (e *VM) TakeException(maxText int) Exception {
	v := lib.XJS_GetException(e.tls, e.ctx)
	defer e.free(v)
	var t Exception
	switch int32(v.Ftag) {
	case lib.EJS_TAG_NULL:
		t.Null, t.Message = true, "null"
	case lib.EJS_TAG_OBJECT:
		t.Name, t.Message, t.Stack = e.stringProp(v, "name", maxText), e.stringProp(v, "message", maxText), e.stringProp(v, "stack", maxText)
		t.Line, t.Column = e.intProp(v, "lineNumber"), e.intProp(v, "columnNumber")
	case lib.EJS_TAG_STRING, lib.EJS_TAG_STRING_ROPE:
		t.Message = e.cappedString(v, maxText)
	default:
		t.Message = "the engine failed without an exception"
	}
	return t
}

// GoString copies the JS string v out as UTF-8. A lone surrogate comes out
// as invalid UTF-8. It fails only when the engine runs out of memory.
func (e *VM) GoString(v Value) (string, bool) { return e.goString(v.v) }

// NewString makes a JS string of s, which the caller frees, or an exception
// value.
func (e *VM) NewString(s string) Value { return Value{e.newString(s)} }

// newString makes a JS string of s, or an exception value.
func (e *VM) newString(s string) lib.TJSValue {
	buf := libc.Xmalloc(e.tls, lib.Tsize_t(len(s)+1))
	if buf == 0 {
		return lib.XJS_ThrowOutOfMemory(e.tls, e.ctx)
	}
	defer libc.Xfree(e.tls, buf)
	copy(unsafe.Slice((*byte)(cPointer(buf)), len(s)), s)
	return lib.XJS_NewStringLen(e.tls, e.ctx, buf, lib.Tsize_t(len(s)))
}

// TakeExceptionValue takes the pending exception as a value the caller
// frees, to hand it on (to a promise's reject).
func (e *VM) TakeExceptionValue() Value { return Value{lib.XJS_GetException(e.tls, e.ctx)} }
