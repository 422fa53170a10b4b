package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/sandbox/engine"
	"github.com/pml-go/pml/internal/textcut"
)

// thrown is what the bridge reports about a value the code threw (kind "js").
type thrown struct {
	Message string `json:"message"`
	Name    string `json:"name"`
	Stack   string `json:"stack"`
	Null    bool   `json:"null"` // the value was null, which is also how the engine reports running out of memory
	Line    int    `json:"-"`    // of a SyntaxError, 1-based
	Column  int    `json:"-"`
}

// fixDetails are the details of a tool error that an uncaught one keeps in
// the run's error: what the AI client needs to fix its call without another
// discover (docs/protocol.md "Error"). Others stay with the cause.
var fixDetails = []string{"suggestions", "declarations", "declaration"}

// toolFailure is what the bridge reports about an uncaught tool error.
type toolFailure struct {
	ID      int    `json:"id"`
	Code    string `json:"code"`
	Message string `json:"message"`
	Tool    string `json:"tool"`
}

// thrownOf is what the engine says about an exception, as the bridge would.
func thrownOf(x engine.Exception) thrown {
	return thrown{Message: x.Message, Name: x.Name, Stack: x.Stack, Null: x.Null, Line: x.Line, Column: x.Column}
}

// failure turns the bridge's report of an uncaught error into the run's error.
func (r *run) failure(kind, detail string) error {
	// Past the deadline or the CPU budget, the interrupt fires at every poll,
	// also inside the bridge's own handling of what the code threw, which can
	// then report an error of its own making ("not a function"): the run's
	// outcome is the limit it reached.
	if r.limitReached() {
		return r.timeout()
	}
	switch kind {
	case "tool":
		var f toolFailure
		if err := json.Unmarshal([]byte(detail), &f); err != nil || f.Code == "" {
			return pmlerr.New(pmlerr.Internal, "sandbox could not read a tool failure")
		}
		e := &pmlerr.Error{Code: pmlerr.Code(f.Code), Message: capText(f.Message), Details: map[string]any{"tool": f.Tool}, Err: r.toolErrs.get(f.ID)}
		if cause, ok := pmlerr.As(e.Err); ok {
			for _, k := range fixDetails {
				if v, ok := cause.Details[k]; ok {
					e.Details[k] = v
				}
			}
		}
		return e
	case "memory":
		return r.memoryError()
	case "js":
		var t thrown
		if err := json.Unmarshal([]byte(detail), &t); err != nil {
			return pmlerr.New(pmlerr.Internal, "sandbox could not read a thrown value")
		}
		return r.thrownError(t)
	}
	if r.m.vm.OutOfMemory() {
		return r.memoryError()
	}
	return pmlerr.New(pmlerr.CodeError, "the code threw a value that could not be described")
}

// thrownError maps a value the code threw to MEMORY_LIMIT, EXECUTION_TIMEOUT
// or CODE_ERROR.
func (r *run) thrownError(t thrown) error {
	t.Message, t.Stack, t.Name = capText(t.Message), capText(t.Stack), capText(t.Name)
	switch {
	case t.Null && r.m.vm.OutOfMemory():
		return r.memoryError()
	case t.Name == "InternalError" && t.Message == "out of memory":
		return r.memoryError()
	case t.Name == "InternalError" && t.Message == "interrupted":
		return r.timeout()
	case t.Name == "InternalError" && t.Message == "stack overflow":
		t.Message = "Maximum call stack size exceeded"
	}
	e := pmlerr.New(pmlerr.CodeError, "%s", t.Message)
	if t.Name != "" {
		e.With("name", t.Name)
	}
	addLocation(e, t.Stack)
	return e
}

// exceptionError maps an exception a call into the engine ended with: one
// without a name, when an allocation failed, is running out of memory.
func (r *run) exceptionError(t thrown) error {
	if r.limitReached() {
		return r.timeout()
	}
	if t.Name == "" && r.m.vm.OutOfMemory() {
		return r.memoryError()
	}
	return r.thrownError(t)
}

// compileError maps the exception evaluating the code ended with: a syntax
// error has a position; anything else is what exceptionError says.
func (r *run) compileError() error {
	t := thrownOf(r.m.vm.TakeException(maxTextBytes))
	if t.Name != "SyntaxError" {
		return r.exceptionError(t)
	}
	e := pmlerr.New(pmlerr.SyntaxError, "%s", t.Message)
	if t.Line > 0 {
		return e.With("line", t.Line).With("column", t.Column)
	}
	addLocation(e, t.Stack)
	delete(e.Details, "stack")
	return e
}

// maxTextBytes caps every text of an error (message, stack, name) that
// reaches an answer: a thrown 30 MB message must not become a 30 MB answer.
const maxTextBytes = 8 << 10

// capText cuts s to maxTextBytes, marking the cut.
func capText(s string) string {
	if len(s) <= maxTextBytes {
		return s
	}
	return textcut.Prefix(s, maxTextBytes) + " … [truncated]"
}

// callBudgetError is the MEMORY_LIMIT of the call whose arguments or result
// crossed Limits.MaxCallBytes.
func (r *run) callBudgetError(tool string) error {
	return pmlerr.New(pmlerr.MemoryLimit, "mcp.%s crossed the execution's budget of %d bytes moved through mcp.* calls (arguments plus results)", strings.Replace(tool, ":", ".", 1), r.lim.MaxCallBytes).With("tool", tool)
}

func (r *run) memoryError() error {
	return pmlerr.New(pmlerr.MemoryLimit, "memory limit exceeded (limit %d bytes)", r.lim.MemoryBytes)
}

// limitReached reports whether the run is past its deadline (the engine's
// clock may see it before the context's timer fires), cancelled, or out of
// CPU budget.
func (r *run) limitReached() bool {
	if d, ok := r.ctx.Deadline(); ok && !time.Now().Before(d) {
		return true
	}
	return r.ctx.Err() != nil || r.cpuSpent() >= r.lim.CPUBudget
}

// timeout is the error of a run whose context ended: its Timeout, the
// caller's deadline or the caller's cancellation.
//
// Which limit ended it is said in the message and in the details "limit"
// ("timeout": the wall clock, "cpu_budget") and "limit_ms", so that a
// caller can say it in its own terms (`pml exec --timeout`). A CPU budget
// capped at the wall clock (a request's timeout_ms below the budget) is
// reported as the wall clock: that is the limit the caller set.
func (r *run) timeout() error {
	took := time.Since(r.started).Round(time.Millisecond).String()
	wall := func(err error) error {
		return (&pmlerr.Error{Code: pmlerr.ExecutionTimeout, Message: "execution timed out after " + took + ": it ran past its wall-clock limit of " + r.lim.Timeout.String() + " (options.timeout_ms lowers it)", Err: err}).
			With("limit", "timeout").With("limit_ms", r.lim.Timeout.Milliseconds())
	}
	if r.cpuOut.Load() || r.cpuSpent() >= r.lim.CPUBudget {
		r.cpuOut.Store(true)
		if r.lim.CPUBudget >= r.lim.Timeout {
			return wall(context.DeadlineExceeded)
		}
		return (&pmlerr.Error{Code: pmlerr.ExecutionTimeout, Message: "the code used up its CPU budget of " + r.lim.CPUBudget.String() + " (CPU time running JS; options.cpu_budget_ms lowers it; the configured budget is the most a request gets)", Err: context.DeadlineExceeded}).
			With("limit", "cpu_budget").With("limit_ms", r.lim.CPUBudget.Milliseconds())
	}
	err := r.parent.Err()
	if err == nil {
		return wall(context.DeadlineExceeded) // the run's own Timeout
	}
	if errors.Is(err, context.Canceled) {
		return &pmlerr.Error{Code: pmlerr.Cancelled, Message: "execution cancelled by the caller after " + took, Err: err}
	}
	return &pmlerr.Error{Code: pmlerr.ExecutionTimeout, Message: "execution timed out after " + took, Err: err}
}

// stuck is the error of a run waiting for a promise that nothing can settle:
// no call is in flight, no job is queued and there are no timers. It would
// only end at the timeout, so it ends now, with the timeout's code.
func (r *run) stuck() error {
	if r.m.vm.OutOfMemory() {
		return r.memoryError()
	}
	return pmlerr.New(pmlerr.ExecutionTimeout, "the code awaits a promise that can never settle (no mcp.* call is in flight); it would only end at the timeout")
}

// evalLocation finds "<eval>:line:column" in a stack frame.
var evalLocation = regexp.MustCompile(`<eval>:(\d+):(\d+)`)

// addLocation sets the "stack" detail to the first frame of the user's code
// (frames of the bridge, named pml$…, are skipped) and "line" and "column" to
// the first position in it.
func addLocation(e *pmlerr.Error, stack string) {
	first := true
	for frame := range strings.SplitSeq(stack, "\n") {
		frame = strings.TrimSpace(frame)
		if frame == "" || strings.HasPrefix(frame, "at pml$") {
			continue
		}
		if first {
			e.With("stack", frame)
			first = false
		}
		if m := evalLocation.FindStringSubmatch(frame); m != nil {
			line, _ := strconv.Atoi(m[1])
			col, _ := strconv.Atoi(m[2])
			e.With("line", line).With("column", col)
			return
		}
	}
}
