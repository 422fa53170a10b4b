package sandbox

import (
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"unicode/utf8"
	"unsafe"

	"modernc.org/libc"
	lib "modernc.org/libquickjs"

	"github.com/pml-go/pml/internal/pmlerr"
)

// The hot path of an mcp.* call, which crosses between JS and Go without the
// wrapper (which converts every value through reflect):
//
//   - The bridge hands the arguments object itself to callFromJS, a C
//     function of the engine, which writes their JSON in Go when they are
//     plain data: objects with Object.prototype or null as prototype and
//     arrays, without accessors, toJSON or holes, holding strings, numbers,
//     booleans and null. That costs a fraction of JSON.stringify with the
//     bridge's replacer, which must run for every value to name what JSON
//     cannot hold. For anything else callFromJS answers callNeedsJS, and the
//     bridge serializes the arguments itself and calls again with the text.
//   - callFromJS makes the call's promise and keeps its resolving functions;
//     a result is parsed and handed to resolve from Go (settle). Only a
//     failure goes through the bridge, which makes the Error.

// Answers of callFromJS besides a call id; keep in sync with bridge.js.
const (
	callBusy    = -1 // too many calls in flight: the bridge queues the call
	callNeedsJS = -2 // not plain data: the bridge serializes the arguments
)

// maxPlainDepth bounds the nesting written in Go; deeper arguments take the
// bridge's path, which the engine's stack limit bounds.
const maxPlainDepth = 64

// callFromJS is the bridge's __pml_call(tool, args): args is the arguments
// object, undefined or null for none, or their JSON text. It answers the
// call's promise, callBusy or callNeedsJS.
func callFromJS(tls *libc.TLS, ctx uintptr, this lib.TJSValue, argc int32, argv uintptr, magic int32) lib.TJSValue {
	m := (*machine)(cPointer(lib.XJS_GetContextOpaque(tls, ctx)))
	return m.callFromJS(argc, argv)
}

func (m *machine) callFromJS(argc int32, argv uintptr) (ret lib.TJSValue) {
	r := m.run
	if r == nil || argc != 2 {
		return jsInt(callBusy)
	}
	// A panic must not unwind through the engine's frames.
	defer func() {
		if p := recover(); p != nil {
			slog.Error("sandbox: panic in the call path", "panic", p)
			r.finish(nil, pmlerr.New(pmlerr.Internal, "sandbox failure: %v", p))
			ret = jsInt(callBusy)
		}
	}()
	if !r.canCall() {
		r.bridgeQueued = true
		return jsInt(callBusy)
	}
	e := &m.engine
	tool, ok := e.goString(jsArg(argv, 0))
	if !ok {
		r.finish(nil, r.engineFailure("read the tool name"))
		return jsInt(callBusy)
	}
	var text []byte
	switch args := jsArg(argv, 1); int32(args.Ftag) {
	case lib.EJS_TAG_UNDEFINED, lib.EJS_TAG_NULL:
		text = []byte("{}")
	case lib.EJS_TAG_STRING, lib.EJS_TAG_STRING_ROPE:
		s, ok := e.goString(args)
		if !ok {
			r.finish(nil, r.engineFailure("read call arguments"))
			return jsInt(callBusy)
		}
		text = []byte(s)
	default:
		if text, ok = e.plainJSON(args, r.lim.MemoryBytes); !ok {
			return jsInt(callNeedsJS)
		}
	}
	promise, res, ok := e.newPromise()
	if !ok {
		r.finish(nil, r.engineFailure("create a promise"))
		return jsInt(callBusy)
	}
	id := r.startCall(tool, text)
	if id < 0 {
		r.bridgeQueued = true
		res.free(e)
		e.free(promise)
		return jsInt(callBusy)
	}
	m.waiting[id] = res
	return promise
}

// resolvers are the resolving functions of a call's promise, which Go holds
// until the call settles.
type resolvers struct{ resolve, reject lib.TJSValue }

func (res resolvers) free(e *engine) {
	e.free(res.resolve)
	e.free(res.reject)
}

// newPromise makes a promise and its resolving functions.
func (e *engine) newPromise() (lib.TJSValue, resolvers, bool) {
	const size = 2 * int(unsafe.Sizeof(lib.TJSValue{}))
	funcs := e.tls.Alloc(size)
	defer e.tls.Free(size)
	p := lib.XJS_NewPromiseCapability(e.tls, e.ctx, funcs)
	if int32(p.Ftag) == lib.EJS_TAG_EXCEPTION {
		e.clearException()
		return p, resolvers{}, false
	}
	return p, resolvers{resolve: jsArg(funcs, 0), reject: jsArg(funcs, 1)}, true
}

// settle hands a call's result to its promise: the parsed value, or what
// parsing threw (a result nested too deep).
func (r *run) settle(res resolvers, value []byte) error {
	e := &r.m.engine
	// The engine's JSON parser reads up to a terminating NUL.
	buf := libc.Xmalloc(e.tls, lib.Tsize_t(len(value)+1))
	if buf == 0 {
		return pmlerr.New(pmlerr.Internal, "sandbox failure: out of host memory")
	}
	defer libc.Xfree(e.tls, buf)
	b := unsafe.Slice((*byte)(cPointer(buf)), len(value)+1)
	copy(b, value)
	b[len(value)] = 0
	v := lib.XJS_ParseJSON(e.tls, e.ctx, buf, lib.Tsize_t(len(value)), resultName)
	f := res.resolve
	if int32(v.Ftag) == lib.EJS_TAG_EXCEPTION {
		v, f = lib.XJS_GetException(e.tls, e.ctx), res.reject
	}
	defer e.free(v)
	return r.callJS(f, v)
}

// resultName is the file name of a parse error in a tool result.
var resultName = func() uintptr {
	p, err := libc.CString("<tool result>")
	if err != nil {
		panic(err)
	}
	return p
}()

// callJS calls the JS function f from Go, outside the wrapper.
func (r *run) callJS(f lib.TJSValue, args ...lib.TJSValue) error {
	if r.outcome != nil {
		return nil
	}
	if r.ctx.Err() != nil {
		return r.timeout()
	}
	e := &r.m.engine
	size := len(args) * int(unsafe.Sizeof(lib.TJSValue{}))
	argv := e.tls.Alloc(size)
	defer e.tls.Free(size)
	for i, a := range args {
		*(*lib.TJSValue)(cPointer(argv + uintptr(i)*unsafe.Sizeof(lib.TJSValue{}))) = a
	}
	v := lib.XJS_Call(e.tls, e.ctx, f, jsUndefined, int32(len(args)), argv)
	if int32(v.Ftag) == lib.EJS_TAG_EXCEPTION {
		return r.exception()
	}
	e.free(v)
	return nil
}

// exception takes the exception a call into the engine ended with and
// returns the run's error for it. Once the code has an outcome, the
// exception is the interrupt that stopped it, and not an error.
func (r *run) exception() error {
	e := &r.m.engine
	v := lib.XJS_GetException(e.tls, e.ctx)
	defer e.free(v)
	if r.outcome != nil {
		return nil
	}
	var t thrown
	switch int32(v.Ftag) {
	case lib.EJS_TAG_NULL:
		t.Null, t.Message = true, "null"
	case lib.EJS_TAG_OBJECT:
		t.Name, t.Message, t.Stack = e.stringProp(v, "name"), e.stringProp(v, "message"), e.stringProp(v, "stack")
	default:
		t.Message, _ = e.goString(v)
	}
	if t.Name == "" && e.outOfMemory() {
		return r.memoryError()
	}
	return r.thrownError(t)
}

// stringProp reads a string property of an error object; "" when it is
// missing or not a string.
func (e *engine) stringProp(obj lib.TJSValue, name string) string {
	cname, err := libc.CString(name)
	if err != nil {
		return ""
	}
	defer libc.Xfree(e.tls, cname)
	v := lib.XJS_GetPropertyStr(e.tls, e.ctx, obj, cname)
	defer e.free(v)
	switch int32(v.Ftag) {
	case lib.EJS_TAG_STRING, lib.EJS_TAG_STRING_ROPE:
		s, _ := e.goString(v)
		return s
	case lib.EJS_TAG_EXCEPTION:
		e.clearException()
	}
	return ""
}

// engineFailure is the run's error when the engine could not hand over a
// value: it ran out of memory, or something this package does not expect.
func (r *run) engineFailure(what string) error {
	if r.m.engine.outOfMemory() {
		return r.memoryError()
	}
	return pmlerr.New(pmlerr.Internal, "sandbox failure: cannot %s", what)
}

// installCall defines the global __pml_call, which the bridge takes and
// deletes. The engine finds m again through the context's opaque word: the
// machine outlives its VM, and Go does not move heap objects.
func (m *machine) installCall() error {
	e := &m.engine
	lib.XJS_SetContextOpaque(e.tls, e.ctx, uintptr(unsafe.Pointer(m)))
	name, err := libc.CString("__pml_call")
	if err != nil {
		return err
	}
	defer libc.Xfree(e.tls, name)
	fn := lib.XJS_NewCFunction2(e.tls, e.ctx, funcAddr(callFromJS), name, 2, lib.EJS_CFUNC_generic_magic, 0)
	if int32(fn.Ftag) == lib.EJS_TAG_EXCEPTION {
		e.clearException()
		return fmt.Errorf("create __pml_call")
	}
	// JS_SetPropertyStr takes fn over, also when it fails.
	if lib.XJS_SetPropertyStr(e.tls, e.ctx, (*lib.TJSContext)(cPointer(e.ctx)).Fglobal_obj, name, fn) < 0 {
		e.clearException()
		return fmt.Errorf("define __pml_call")
	}
	return nil
}

// ---- engine values ----------------------------------------------------------

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

func (e *engine) free(v lib.TJSValue) { lib.XFreeValue(e.tls, e.ctx, v) }

// clearException drops the exception a failed engine call left pending, so
// that the code does not see it.
func (e *engine) clearException() { e.free(lib.XJS_GetException(e.tls, e.ctx)) }

// classProto is the context's prototype for objects of a class.
func (e *engine) classProto(class uintptr) uintptr {
	protos := (*lib.TJSContext)(cPointer(e.ctx)).Fclass_proto
	return objectPointer(*(*lib.TJSValue)(cPointer(protos + class*unsafe.Sizeof(lib.TJSValue{}))))
}

// goString copies a JS string out as UTF-8. A lone surrogate comes out as
// invalid UTF-8. It fails only when the engine runs out of memory.
func (e *engine) goString(v lib.TJSValue) (string, bool) {
	var s string
	ok := e.withCString(v, func(b []byte) { s = string(b) })
	return s, ok
}

// withCString calls f with the UTF-8 bytes of the string v, valid during the
// call.
func (e *engine) withCString(v lib.TJSValue, f func([]byte)) bool {
	const sizeOfSize = unsafe.Sizeof(lib.Tsize_t(0))
	plen := e.tls.Alloc(int(sizeOfSize))
	defer e.tls.Free(int(sizeOfSize))
	p := lib.XJS_ToCStringLen2(e.tls, e.ctx, plen, v, 0)
	if p == 0 {
		e.clearException()
		return false
	}
	f(unsafe.Slice((*byte)(cPointer(p)), *(*lib.Tsize_t)(cPointer(plen))))
	lib.XJS_FreeCString(e.tls, e.ctx, p)
	return true
}

// withAtomString is withCString for a property name.
func (e *engine) withAtomString(atom lib.TJSAtom, f func([]byte)) bool {
	const sizeOfSize = unsafe.Sizeof(lib.Tsize_t(0))
	plen := e.tls.Alloc(int(sizeOfSize))
	defer e.tls.Free(int(sizeOfSize))
	p := lib.XJS_AtomToCStringLen(e.tls, e.ctx, plen, atom)
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
func (e *engine) hasOwn(obj uintptr, atom lib.TJSAtom) bool {
	r := lib.XJS_GetOwnProperty(e.tls, e.ctx, 0, objectValue(obj), atom)
	if r < 0 {
		e.clearException()
	}
	return r != 0
}

func objectValue(p uintptr) lib.TJSValue {
	return lib.TJSValue{Ftag: lib.EJS_TAG_OBJECT, Fu: lib.TJSValueUnion{Fuint641: uint64(p)}}
}

// ownData returns the value of the own data property atom of the ordinary
// object or array obj, without running any code; ok is false for a missing
// property or an accessor. The caller frees the value.
func (e *engine) ownData(obj uintptr, atom lib.TJSAtom) (v lib.TJSValue, ok bool) {
	const size = int(unsafe.Sizeof(lib.TJSPropertyDescriptor{}))
	p := e.tls.Alloc(size)
	defer e.tls.Free(size)
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

// ---- JSON of plain data ---------------------------------------------------------

// plainJSON writes the JSON text of v, an object, when it is plain data of at
// most max bytes. It runs no JS code: no getter, toJSON or proxy trap.
func (e *engine) plainJSON(v lib.TJSValue, max int64) ([]byte, bool) {
	w := jsonWriter{e: e, max: int(max), objectProto: e.classProto(lib.EJS_CLASS_OBJECT), arrayProto: e.classProto(lib.EJS_CLASS_ARRAY)}
	// A toJSON on a shared prototype applies to every object.
	if e.hasOwn(w.objectProto, atomToJSON) || e.hasOwn(w.arrayProto, atomToJSON) {
		return nil, false
	}
	if !w.value(v) || len(w.buf) > w.max {
		return nil, false
	}
	return w.buf, true
}

type jsonWriter struct {
	e                       *engine
	buf                     []byte
	max                     int
	open                    []uintptr // the objects being written, for cycles
	objectProto, arrayProto uintptr
}

func (w *jsonWriter) value(v lib.TJSValue) bool {
	if len(w.buf) > w.max {
		return false
	}
	switch int32(v.Ftag) {
	case lib.EJS_TAG_INT:
		w.buf = strconv.AppendInt(w.buf, int64(int32(uint32(v.Fu.Fuint641))), 10)
	case lib.EJS_TAG_FLOAT64:
		w.buf = appendJSNumber(w.buf, math.Float64frombits(v.Fu.Fuint641))
	case lib.EJS_TAG_BOOL:
		if uint32(v.Fu.Fuint641) != 0 {
			w.buf = append(w.buf, "true"...)
		} else {
			w.buf = append(w.buf, "false"...)
		}
	case lib.EJS_TAG_NULL:
		w.buf = append(w.buf, "null"...)
	case lib.EJS_TAG_STRING, lib.EJS_TAG_STRING_ROPE:
		return w.string(func(f func([]byte)) bool { return w.e.withCString(v, f) })
	case lib.EJS_TAG_OBJECT:
		return w.object(objectPointer(v))
	default: // undefined where JSON has no place for it, BigInt, symbol
		return false
	}
	return true
}

// string writes a quoted string, which with must hand over as UTF-8. A lone
// surrogate (invalid UTF-8 here) takes the bridge's path, which escapes it.
func (w *jsonWriter) string(with func(func([]byte)) bool) bool {
	valid := false
	if !with(func(b []byte) {
		if valid = utf8.Valid(b); valid {
			w.buf = appendJSONString(w.buf, b)
		}
	}) {
		return false
	}
	return valid
}

func (w *jsonWriter) object(p uintptr) bool {
	if len(w.open) == maxPlainDepth {
		return false
	}
	for _, q := range w.open {
		if q == p {
			return false // a cycle: the bridge names where
		}
	}
	obj := (*lib.TJSObject)(cPointer(p))
	proto := (*lib.TJSShape)(cPointer(obj.Fshape)).Fproto
	array := false
	switch uint32(obj.Fclass_id) {
	case lib.EJS_CLASS_OBJECT:
		if proto != 0 && proto != w.objectProto {
			return false
		}
	case lib.EJS_CLASS_ARRAY:
		if proto != w.arrayProto {
			return false
		}
		array = true
	default: // functions, dates, maps, proxies, boxed primitives...
		return false
	}
	if w.e.hasOwn(p, atomToJSON) {
		return false
	}
	w.open = append(w.open, p)
	defer func() { w.open = w.open[:len(w.open)-1] }()
	if array {
		return w.array(p)
	}
	return w.fields(p)
}

func (w *jsonWriter) fields(p uintptr) bool {
	e := w.e
	const sizes = int(unsafe.Sizeof(uintptr(0)) + unsafe.Sizeof(uint32(0)))
	out := e.tls.Alloc(sizes)
	defer e.tls.Free(sizes)
	ptab, plen := out, out+unsafe.Sizeof(uintptr(0))
	if lib.XJS_GetOwnPropertyNames(e.tls, e.ctx, ptab, plen, objectValue(p), lib.MJS_GPN_STRING_MASK|lib.MJS_GPN_ENUM_ONLY) < 0 {
		e.clearException()
		return false
	}
	tab, n := *(*uintptr)(cPointer(ptab)), *(*uint32)(cPointer(plen))
	defer lib.XJS_FreePropertyEnum(e.tls, e.ctx, tab, n)
	w.buf = append(w.buf, '{')
	first := true
	for i := range uintptr(n) {
		atom := (*lib.TJSPropertyEnum)(cPointer(tab + i*unsafe.Sizeof(lib.TJSPropertyEnum{}))).Fatom
		v, ok := e.ownData(p, atom)
		if !ok {
			return false
		}
		if int32(v.Ftag) == lib.EJS_TAG_UNDEFINED {
			continue // JSON leaves the property out
		}
		if !first {
			w.buf = append(w.buf, ',')
		}
		first = false
		ok = w.string(func(f func([]byte)) bool { return e.withAtomString(atom, f) })
		if ok {
			w.buf = append(w.buf, ':')
			ok = w.value(v)
		}
		e.free(v)
		if !ok {
			return false
		}
	}
	w.buf = append(w.buf, '}')
	return true
}

func (w *jsonWriter) array(p uintptr) bool {
	e := w.e
	length, ok := e.ownData(p, atomLength)
	if !ok {
		return false
	}
	if int32(length.Ftag) != lib.EJS_TAG_INT {
		e.free(length)
		return false
	}
	n := uint32(length.Fu.Fuint641)
	w.buf = append(w.buf, '[')
	for i := range n {
		if i > 0 {
			w.buf = append(w.buf, ',')
		}
		v, ok := e.ownData(p, indexAtom(i))
		if !ok {
			return false // a hole, which JSON reads through the prototypes
		}
		if int32(v.Ftag) == lib.EJS_TAG_UNDEFINED {
			w.buf = append(w.buf, "null"...)
			continue
		}
		ok = w.value(v)
		e.free(v)
		if !ok {
			return false
		}
	}
	w.buf = append(w.buf, ']')
	return true
}

// appendJSNumber writes f as JSON.stringify does (Number::toString).
func appendJSNumber(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0):
		return append(b, "null"...)
	case f == 0:
		return append(b, '0') // also -0
	}
	if a := math.Abs(f); a >= 1e-6 && a < 1e21 {
		return strconv.AppendFloat(b, f, 'f', -1, 64)
	}
	// Go writes 1e-07 and 1e+21; JS writes 1e-7 and 1e+21.
	start := len(b)
	b = strconv.AppendFloat(b, f, 'e', -1, 64)
	for i := start; i < len(b); i++ {
		if b[i] == 'e' {
			digits := i + 2 // after e and the sign
			for len(b) > digits+1 && b[digits] == '0' {
				b = append(b[:digits], b[digits+1:]...)
			}
			break
		}
	}
	return b
}

// appendJSONString writes s, valid UTF-8, quoted as JSON.stringify does:
// only quotes, backslashes and control characters are escaped.
func appendJSONString(b, s []byte) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i, c := range s {
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// Operations of the bridge's control function; keep in sync with bridge.js.
const (
	controlStart    = 0 // (fn, argsText): run the user function (through the wrapper)
	controlReject   = 1 // (reject, id, message, code, tool): fail a call
	controlDispatch = 2 // (): hand over the calls queued while too many were in flight
)

// callBridge calls the bridge's control function from Go.
func (r *run) callBridge(op int, fn lib.TJSValue, id int, msg, code, tool string) error {
	e := &r.m.engine
	var strs [3]lib.TJSValue
	for i, s := range [3]string{msg, code, tool} {
		strs[i] = e.newString(s)
		if int32(strs[i].Ftag) == lib.EJS_TAG_EXCEPTION {
			for _, v := range strs[:i] {
				e.free(v)
			}
			return r.exception()
		}
	}
	defer func() {
		for _, v := range strs {
			e.free(v)
		}
	}()
	return r.callJS(r.m.controlFn, jsInt(op), fn, jsInt(id), strs[0], strs[1], strs[2])
}

// newString makes a JS string of s, or an exception value.
func (e *engine) newString(s string) lib.TJSValue {
	buf := libc.Xmalloc(e.tls, lib.Tsize_t(len(s)+1))
	if buf == 0 {
		return lib.XJS_ThrowOutOfMemory(e.tls, e.ctx)
	}
	defer libc.Xfree(e.tls, buf)
	copy(unsafe.Slice((*byte)(cPointer(buf)), len(s)), s)
	return lib.XJS_NewStringLen(e.tls, e.ctx, buf, lib.Tsize_t(len(s)))
}
