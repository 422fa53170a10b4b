package sandbox

import (
	"encoding/json"
	"log/slog"
	"unicode/utf8"

	"github.com/pml-go/pml/internal/pmlerr"
)

// Operations of the bridge's host function; keep in sync with bridge.js.
// Calls take their own path (fastcall.go).
const (
	opLog    = 2 // (line) -> 1 once further lines would be dropped
	opResult = 3 // (returnJSON)
	opFail   = 4 // (kind, detailJSON)
)

// host serves the bridge, on the VM goroutine. A panic here would stop the
// JS with an uncatchable error and go on in Run, so it becomes the run's
// outcome instead.
func (r *run) host(op int, a, b string) (ret int) {
	defer func() {
		if p := recover(); p != nil {
			slog.Error("sandbox: panic in host function", "op", op, "panic", p)
			r.finish(nil, pmlerr.New(pmlerr.Internal, "sandbox failure: %v", p))
			ret = -1
		}
	}()
	switch op {
	case opLog:
		return r.log(a)
	case opResult:
		r.finish(r.result(a))
	case opFail:
		r.finish(nil, r.failure(a, b))
	}
	return 0
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
		line = truncateUTF8(line, room)
	}
	r.logs = append(r.logs, line)
	r.logBytes += len(line) + 1
	if r.logsTruncated {
		return 1
	}
	return 0
}

// truncateUTF8 cuts s to at most n bytes without splitting a character.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// result checks the serialized return value.
func (r *run) result(text string) (json.RawMessage, error) {
	if len(text) > r.lim.MaxResultBytes {
		return nil, errResultTooLarge(len(text), r.lim.MaxResultBytes)
	}
	if !json.Valid([]byte(text)) {
		return nil, pmlerr.New(pmlerr.Internal, "sandbox produced invalid JSON for the return value")
	}
	return json.RawMessage(text), nil
}
