package sandbox

import (
	"unsafe"

	"modernc.org/libc"
	lib "modernc.org/libquickjs"

	"github.com/pml-go/pml/internal/pmlerr"
)

// The path of an mcp.* call, most of a round trip, crosses between JS and
// Go through the engine's C API (see host.go and engine.go):
//
//   - The bridge hands the arguments object itself to Go (callFromJS), which
//     writes their JSON when they are plain data: objects with
//     Object.prototype or null as prototype and arrays, without accessors,
//     toJSON or holes, holding strings, numbers, booleans and null. That
//     costs a fraction of JSON.stringify with the bridge's replacer, which
//     must run for every value to name what JSON cannot hold. For anything
//     else callFromJS answers callNeedsJS, and the bridge serializes the
//     arguments itself and calls again with the text.
//   - callFromJS makes the call's promise and keeps its resolving functions;
//     a result is parsed and handed to resolve from Go (settle). Only a
//     failure goes through the bridge, which makes the Error.

// Answers of callFromJS besides a call id; keep in sync with bridge.js.
const (
	callBusy    = -1 // too many calls in flight: the bridge queues the call
	callNeedsJS = -2 // not plain data: the bridge serializes the arguments
)

// callFromJS starts a call of the bridge: a is the tool name, b the
// arguments object, undefined or null for none, or their JSON text. It
// answers the call's promise, callBusy or callNeedsJS.
func (r *run) callFromJS(a, b lib.TJSValue) lib.TJSValue {
	if !r.canCall() {
		r.bridgeQueued = true
		return jsInt(callBusy)
	}
	e := r.m.engine
	tool, ok := e.goString(a)
	if !ok {
		r.finish(nil, r.engineFailure("read the tool name"))
		return jsInt(callBusy)
	}
	var text []byte
	switch int32(b.Ftag) {
	case lib.EJS_TAG_UNDEFINED, lib.EJS_TAG_NULL:
		text = []byte("{}")
	case lib.EJS_TAG_STRING, lib.EJS_TAG_STRING_ROPE:
		s, ok := e.goString(b)
		if !ok {
			r.finish(nil, r.engineFailure("read call arguments"))
			return jsInt(callBusy)
		}
		text = []byte(s)
	default:
		if text, ok = e.plainJSON(b, r.lim.MemoryBytes); !ok {
			return jsInt(callNeedsJS)
		}
	}
	if !r.budget.Take(int64(len(text))) {
		r.finish(nil, r.callBudgetError(tool))
		return jsInt(callBusy)
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
	r.m.waiting[id] = res
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
	funcs := e.scratch
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
	e := r.m.engine
	// The engine's JSON parser reads up to a terminating NUL; the name of
	// the "file" for its errors follows.
	const name = "\x00<tool result>\x00"
	size := len(value) + len(name)
	buf := libc.Xmalloc(e.tls, lib.Tsize_t(size))
	if buf == 0 {
		return pmlerr.New(pmlerr.Internal, "sandbox failure: out of host memory")
	}
	defer libc.Xfree(e.tls, buf)
	b := unsafe.Slice((*byte)(cPointer(buf)), size)
	copy(b[copy(b, value):], name)
	v := lib.XJS_ParseJSON(e.tls, e.ctx, buf, lib.Tsize_t(len(value)), buf+uintptr(len(value))+1)
	f := res.resolve
	if int32(v.Ftag) == lib.EJS_TAG_EXCEPTION {
		v, f = lib.XJS_GetException(e.tls, e.ctx), res.reject
	}
	defer e.free(v)
	return r.callJS(f, v)
}

// callJS calls the JS function f from Go.
func (r *run) callJS(f lib.TJSValue, args ...lib.TJSValue) error {
	if r.outcome != nil {
		return nil
	}
	if r.ctx.Err() != nil {
		return r.timeout()
	}
	e := r.m.engine
	r.enterJS()
	v := e.call(f, args...)
	r.leaveJS()
	if isException(v) {
		return r.exception()
	}
	e.free(v)
	return nil
}

// exception takes the exception a call into the engine ended with and
// returns the run's error for it. Once the code has an outcome, the
// exception is the interrupt that stopped it, and not an error.
func (r *run) exception() error {
	t := r.m.engine.takeException()
	if r.outcome != nil {
		return nil
	}
	return r.exceptionError(t)
}

// Operations of the bridge's control function; keep in sync with bridge.js.
const (
	controlStart    = 0 // (fn, argsText): run the user function
	controlReject   = 1 // (reject, id, message, code, tool): fail a call
	controlDispatch = 2 // (): hand over the calls queued while too many were in flight
)

// callBridge calls the bridge's control function from Go.
func (r *run) callBridge(op int, fn lib.TJSValue, id int, msg, code, tool string) error {
	e := r.m.engine
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
