package sandbox

import "github.com/pml-go/pml/internal/sandbox/engine"

// The path of an mcp.* call, most of a round trip, crosses between JS and
// Go through one host function of the engine (see host.go and package
// engine):
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
func (r *run) callFromJS(a, b engine.Value) engine.Value {
	if !r.canCall() {
		r.bridgeQueued = true
		return engine.Int(callBusy)
	}
	vm := r.m.vm
	tool, ok := vm.GoString(a)
	if !ok {
		r.finish(nil, r.engineFailure("read the tool name"))
		return engine.Int(callBusy)
	}
	var text []byte
	switch {
	case b.IsNullish():
		text = []byte("{}")
	case b.IsString():
		s, ok := vm.GoString(b)
		if !ok {
			r.finish(nil, r.engineFailure("read call arguments"))
			return engine.Int(callBusy)
		}
		text = []byte(s)
	default:
		if text, ok = vm.PlainJSON(b, r.lim.MemoryBytes); !ok {
			return engine.Int(callNeedsJS)
		}
	}
	if !r.budget.Take(int64(len(text))) {
		r.finish(nil, r.callBudgetError(tool))
		return engine.Int(callBusy)
	}
	promise, resolve, reject, ok := vm.NewPromise()
	res := resolvers{resolve: resolve, reject: reject}
	if !ok {
		r.finish(nil, r.engineFailure("create a promise"))
		return engine.Int(callBusy)
	}
	id := r.startCall(tool, text)
	if id < 0 {
		r.bridgeQueued = true
		res.free(vm)
		vm.Free(promise)
		return engine.Int(callBusy)
	}
	r.m.waiting[id] = res
	return promise
}

// resolvers are the resolving functions of a call's promise, which Go holds
// until the call settles.
type resolvers struct{ resolve, reject engine.Value }

func (res resolvers) free(vm *engine.VM) {
	vm.Free(res.resolve)
	vm.Free(res.reject)
}

// settle hands a call's result to its promise: the parsed value, or what
// parsing threw (a result nested too deep).
func (r *run) settle(res resolvers, value []byte) error {
	vm := r.m.vm
	v := vm.ParseJSON(value, "<tool result>")
	f := res.resolve
	if v.IsException() {
		v, f = vm.TakeExceptionValue(), res.reject
	}
	defer vm.Free(v)
	return r.callJS(f, v)
}

// callJS calls the JS function f from Go.
func (r *run) callJS(f engine.Value, args ...engine.Value) error {
	if r.outcome != nil {
		return nil
	}
	if r.ctx.Err() != nil {
		return r.timeout()
	}
	vm := r.m.vm
	r.enterJS()
	v := vm.Call(f, args...)
	r.leaveJS()
	if v.IsException() {
		return r.exception()
	}
	vm.Free(v)
	return nil
}

// exception takes the exception a call into the engine ended with and
// returns the run's error for it. Once the code has an outcome, the
// exception is the interrupt that stopped it, and not an error.
func (r *run) exception() error {
	t := thrownOf(r.m.vm.TakeException(maxTextBytes))
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
func (r *run) callBridge(op int, fn engine.Value, id int, msg, code, tool string) error {
	vm := r.m.vm
	var strs [3]engine.Value
	for i, s := range [3]string{msg, code, tool} {
		strs[i] = vm.NewString(s)
		if strs[i].IsException() {
			for _, v := range strs[:i] {
				vm.Free(v)
			}
			return r.exception()
		}
	}
	defer func() {
		for _, v := range strs {
			vm.Free(v)
		}
	}()
	return r.callJS(r.m.controlFn, engine.Int(op), fn, engine.Int(id), strs[0], strs[1], strs[2])
}
