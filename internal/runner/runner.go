// Package runner is the one place code runs, on the gateway and in the
// package alike: admission, the trace recorder, the sandbox, the finished
// trace and the answer of a top-level run (Run), and the nested runs of the
// capabilities that code calls (RunNested). What differs between the two
// sides (the mcp bridge, where each tool is routed, where traces go) comes
// in as functions.
package runner

import (
	"context"
	"encoding/json"
	"time"

	"github.com/pml-go/pml/internal/admission"
	"github.com/pml-go/pml/internal/afteranswer"
	"github.com/pml-go/pml/internal/analysis"
	"github.com/pml-go/pml/internal/sandbox"
	"github.com/pml-go/pml/internal/tools"
	"github.com/pml-go/pml/internal/tracing"
	"github.com/pml-go/pml/internal/wire"
)

// Runner runs analysed code for one side.
type Runner struct {
	// Admission admits every VM: a run's own, and those of the capabilities
	// it calls, which join its execution. Required.
	Admission *admission.Controller
	// Limits are the configured limits. A request lowers them for its own
	// run (Job.Options); a nested run gets them whole, as a run of its own.
	Limits sandbox.Limits
	// Local marks answers and traces as executed on the user's machine.
	Local bool
}

// Sink is where a run's finished trace goes.
type Sink struct {
	// Sanitizer cleans the trace before Keep sees it; nil takes one that
	// knows no secret values (its generic rules and bounds still apply).
	Sanitizer *tracing.Sanitizer
	// Keep stores or queues the sanitized trace.
	Keep func(tracing.Trace)
}

// Job is one top-level run.
type Job struct {
	Tenant     string // for admission
	Analysis   *analysis.Analysis
	Code       string          // the code as sent, for the trace
	Args       json.RawMessage // the code's global args; nil: {}
	WorkflowID string
	// TraceID is the id to record the run under, as the caller asked
	// (wire.TraceIDMeta); "": a fresh one.
	TraceID string
	Options *wire.ExecuteOptions // a request's lower budgets; nil: none
	// Call is the mcp bridge. The recorder and the admission wrap it.
	Call tools.CallFunc
	// RoutingOf says "client" or "server" for each tool in the trace.
	RoutingOf func(tool string) string
	Trace     Sink
	// Halt, when set, sees the run's error first (nil on success): an
	// answer it takes is the run's answer and no trace is kept, as for a
	// run paused for an approval, which goes on later under the same
	// workflow.
	Halt func(error) (wire.Answer, bool)
	// Start is when the request arrived, for duration_ms.
	Start time.Time
}

// Result is a run's answer and the engine memory it ended with (for the
// "sandbox memory" metric; 0 when the code never ran).
type Result struct {
	Answer      wire.Answer
	MemoryBytes int64
}

// Run admits, records and runs j, keeps its trace and answers. A refusal by
// admission is the answer, with no trace: nothing ran.
func (r *Runner) Run(ctx context.Context, j Job) Result {
	an := j.Analysis
	runCtx, vm, err := r.Admission.Enter(ctx, j.Tenant)
	if err != nil {
		return Result{Answer: wire.ErrorAnswer(err, j.WorkflowID)}
	}
	rec := newRecorder(j.TraceID, an, j.RoutingOf, sanitizer(j.Trace.Sanitizer))
	res, err := func() (sandbox.Result, error) {
		defer vm.Exit() // before the trace is kept: the run no longer needs its places
		return sandbox.Run(runCtx, an.JS, j.Args, withProgress(runCtx, vm.Wrap(rec.Wrap(j.Call)), an, wire.ProgressFrom(ctx)), r.limitsFor(j.Options))
	}()
	if j.Halt != nil {
		if a, ok := j.Halt(err); ok {
			return Result{Answer: a}
		}
	}
	// Sanitized and bounded by the recorder: finishing costs only the last
	// calls of a long run, on the answer's path, where it sees the calls as
	// the run left them. Keeping it may wait for the answer's write
	// (internal/afteranswer).
	// The trace's tools_used are the tools called, which the recorder
	// lists; the plan is its DAG (a failed run called only some of them).
	trace := rec.Finish(tracing.Trace{WorkflowID: j.WorkflowID, Code: j.Code,
		Logs: res.Logs, ExecutedLocally: r.Local, DAG: an.WireDAGJSON()}, err)
	afteranswer.Defer(ctx, func() { j.Trace.Keep(trace) })
	traceID := trace.TraceID
	if err != nil {
		a := wire.ErrorAnswer(an.MapError(err), j.WorkflowID)
		a.TraceID = traceID
		return Result{Answer: a}
	}
	return Result{MemoryBytes: res.MemoryBytes, Answer: wire.Answer{
		Status:          wire.StatusSuccess,
		Result:          res.Value,
		ExecutedLocally: wire.Bool(r.Local),
		WorkflowID:      j.WorkflowID,
		TraceID:         traceID,
		ToolsUsed:       wire.ToolIDs(wire.NonNil(an.Tools)),
		DurationMS:      wire.Float(float64(time.Since(j.Start).Microseconds()) / 1000),
		Logs:            res.Logs,
	}}
}

// limitsFor is the configured limits lowered to what a request asks.
func (r *Runner) limitsFor(o *wire.ExecuteOptions) sandbox.Limits {
	if o == nil {
		return r.Limits
	}
	return r.Limits.ForRequest(o.TimeoutMS, o.CPUBudgetMS)
}

// newRecorder records every mcp.* call of a top-level run, each with the
// DAG layer of its tool's first call site.
func newRecorder(traceID string, an *analysis.Analysis, routingOf func(string) string, san *tracing.Sanitizer) *tracing.Recorder {
	if traceID == "" {
		traceID = tracing.NewTraceID()
	}
	layers := map[string]int{}
	for _, t := range an.DAG.Tasks {
		if _, seen := layers[t.Tool]; !seen {
			layers[t.Tool] = t.Layer
		}
	}
	return tracing.NewRecorder(traceID, tracing.RecorderOptions{
		LayerOf:   func(tool string, _ int) int { return layers[tool] },
		RoutingOf: routingOf,
		Sanitizer: san,
	})
}

func sanitizer(s *tracing.Sanitizer) *tracing.Sanitizer {
	if s == nil {
		return tracing.NewSanitizer(nil)
	}
	return s
}
