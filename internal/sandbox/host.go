package sandbox

import (
	"encoding/json"
	"log/slog"
	"math/rand/v2"

	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/rawjson"
	"github.com/pml-go/pml/internal/sandbox/engine"
	"github.com/pml-go/pml/internal/textcut"
)

// The bridge reaches Go through one C function of the engine, __pml_host,
// which it takes off the global object before user code runs. Its
// arguments are the engine's values, read without any conversion layer: the
// call path (jscalls.go) is most of an mcp.* round trip.

// Operations of the host function; keep in sync with bridge.js.
const (
	opCall   = 1 // (tool, args) -> the call's promise, callBusy or callNeedsJS
	opLog    = 2 // (line) -> 1 once further lines would be dropped
	opResult = 3 // (returnJSON)
	opFail   = 4 // (kind, detailJSON)
	opReturn = 5 // (value) -> 1 when Go wrote it as the result, 0: the bridge serializes it (opResult)
	opNow    = 6 // () -> Date.now(), from the run's tape if it has one (tape.go)
	opRandom = 7 // () -> Math.random(), likewise
)

// host serves the bridge, on the VM goroutine. A panic must not unwind
// through the engine's frames, so it becomes the run's outcome.
func (r *run) host(op int, a, b engine.Value) (ret engine.Value) {
	defer func() {
		if p := recover(); p != nil {
			if r.m.vm.Revoked() {
				panic(p) // the fault revoke causes: it unwinds the whole engine
			}
			slog.Error("sandbox: panic in host function", "panic", p)
			r.finish(nil, pmlerr.New(pmlerr.Internal, "sandbox failure: %v", p))
			ret = engine.Int(-1)
		}
	}()
	vm := r.m.vm
	switch op {
	case opNow:
		if r.tape == nil { // a run without a tape reads the real clock
			return engine.Float(nowMillis())
		}
		return engine.Float(r.tape.now.read(nowMillis))
	case opRandom:
		if r.tape == nil {
			return engine.Float(rand.Float64())
		}
		return engine.Float(r.tape.random.read(rand.Float64))
	case opCall:
		return r.callFromJS(a, b)
	case opReturn:
		text, ok := vm.PlainJSON(a, int64(r.lim.MaxResultBytes))
		if !ok {
			return engine.Int(0)
		}
		r.finish(text, nil)
		return engine.Int(1)
	}
	sa, ok := vm.GoString(a)
	if !ok {
		r.finish(nil, r.engineFailure("read a string of the bridge"))
		return engine.Int(-1)
	}
	switch op {
	case opLog:
		return engine.Int(r.log(sa))
	case opResult:
		r.finish(r.result(sa))
	case opFail:
		sb, ok := vm.GoString(b)
		if !ok {
			r.finish(nil, r.engineFailure("read a string of the bridge"))
			break
		}
		r.finish(nil, r.failure(sa, sb))
	}
	return engine.Int(0)
}

// installHost defines the global __pml_host, which the bridge takes off
// the global object before user code runs.
func installHost(vm *engine.VM, host engine.HostFunc) error {
	if err := vm.InstallHost("__pml_host", host); err != nil {
		return err
	}
	if err := vm.InstallHostOp("__pml_now", opNow); err != nil {
		return err
	}
	return vm.InstallHostOp("__pml_random", opRandom)
}

// engineFailure is the run's error when the engine could not hand over a
// value: the run reached a limit, it ran out of memory, or something this
// package does not expect.
func (r *run) engineFailure(what string) error {
	if r.limitReached() {
		// The interrupt that stops the code at its deadline (or CPU budget,
		// or cancellation) fails whatever the engine was doing then: making
		// a call's promise, say, when it came in the Promise constructor.
		return r.timeout()
	}
	if r.m.vm.OutOfMemory() {
		return r.memoryError()
	}
	return pmlerr.New(pmlerr.Internal, "sandbox failure: cannot %s", what)
}

// canCall reports whether the code may start another call now, by the count
// of calls in flight.
func (r *run) canCall() bool {
	return r.outcome == nil && r.inflight < maxConcurrentCalls
}

// startCall starts one mcp.* call unless too many are in flight, by count
// or by argument bytes (which live in Go, outside the engine's limit).
func (r *run) startCall(tool string, args []byte) int {
	n := int64(len(args))
	if !r.canCall() || (r.inflight > 0 && r.inflightBytes+n > r.lim.MemoryBytes) {
		return callBusy
	}
	seq := r.seq
	r.seq++
	r.inflight++
	r.inflightBytes += n
	r.queued = append(r.queued, callJob{seq: seq, tool: tool, args: args})
	return seq
}

// log keeps one console line within MaxLogBytes. Each line counts one byte
// more than its length, so that empty lines are bounded too.
func (r *run) log(line string) int {
	if r.logsTruncated {
		return 1
	}
	room := r.lim.MaxLogBytes - r.logBytes - 1
	if len(line) > room {
		r.logsTruncated = true
		if room <= 0 {
			return 1
		}
		line = textcut.Prefix(line, room)
	}
	r.logs = append(r.logs, line)
	r.logBytes += len(line) + 1
	if r.logsTruncated {
		return 1
	}
	return 0
}

// result checks the serialized return value.
func (r *run) result(text string) (json.RawMessage, error) {
	if len(text) > r.lim.MaxResultBytes {
		return nil, errResultTooLarge(len(text), r.lim.MaxResultBytes)
	}
	if !rawjson.Valid([]byte(text)) {
		return nil, pmlerr.New(pmlerr.Internal, "sandbox produced invalid JSON for the return value")
	}
	return json.RawMessage(text), nil
}
