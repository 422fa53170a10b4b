package engine

import (
	"math"
	"strconv"
	"unicode/utf8"
	"unsafe"

	lib "modernc.org/libquickjs"

	"github.com/pml-go/pml/internal/rawjson"
)

// Call arguments and results written as JSON in Go, without running JS:
// JSON.stringify with a replacer that checks each value costs several times
// more, and most arguments are plain data.

// maxPlainDepth bounds the nesting written in Go; deeper arguments take the
// bridge's path, which the engine's stack limit bounds.
const maxPlainDepth = 64

// PlainJSON writes the JSON text of v when it is plain data of at most max
// bytes: objects with Object.prototype or null as prototype and arrays,
// without accessors, toJSON or holes, holding strings, numbers, booleans and
// null. It runs no JS code: no getter, toJSON or proxy trap (a string,
// number or boolean has no toJSON for JSON.stringify to call). The text is
// byte for byte what JSON.stringify makes.
func (e *VM) PlainJSON(v Value, max int64) ([]byte, bool) { return e.plainJSON(v.v, max) }

func (e *VM) plainJSON(v lib.TJSValue, max int64) ([]byte, bool) {
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
	e                       *VM
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
			w.buf = rawjson.AppendString(w.buf, b, rawjson.AsJSONStringify)
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
	ptab, plen := e.scratch, e.scratch+unsafe.Sizeof(uintptr(0))
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
		if !w.string(func(f func([]byte)) bool { return e.withAtomString(atom, f) }) {
			e.free(v)
			return false
		}
		w.buf = append(w.buf, ':')
		if !w.take(v) {
			return false
		}
	}
	w.buf = append(w.buf, '}')
	return true
}

// take writes v, a property's value, and frees it.
func (w *jsonWriter) take(v lib.TJSValue) bool {
	ok := w.value(v)
	w.e.free(v)
	return ok
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
		if !w.take(v) {
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
	return rawjson.AppendNumber(b, f)
}
