package runner

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/pml-go/pml/internal/analysis"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/sandbox"
	"github.com/pml-go/pml/internal/tools"
	"github.com/pml-go/pml/internal/tracing"
)

// MaxDepth bounds capabilities calling capabilities, so a capability that
// calls itself fails fast instead of nesting VMs until the deadline.
const MaxDepth = 8

type depthKey struct{}

// Depth is how many capability runs enclose ctx.
func Depth(ctx context.Context) int {
	d, _ := ctx.Value(depthKey{}).(int)
	return d
}

// Nested is one capability called by running code.
type Nested struct {
	Tenant   string // for admission, when called outside any run
	Tool     string // the id the code called it by
	FQDN     string
	Analysis *analysis.Analysis // of the capability's code
	Args     json.RawMessage
	// Call is the mcp bridge of the nested run; the caller's, usually.
	Call  tools.CallFunc
	Trace Sink
}

// RunNested runs a capability as one call of its caller's run: in its own
// VM with the configured limits, args bound to the call's arguments, every
// mcp.* call going through n.Call. The VM joins the calling run's admission,
// or is admitted as an execution of its own for a direct call.
//
// Its failure is the caller's TOOL_ERROR, which the calling code may catch;
// the capability's own error code is kept in the "capability_error_code"
// detail. A halt (an approval to ask for) and an INTEGRITY_ERROR (a version
// the person did not approve, docs/security.md) pass through unchanged.
//
// The nested run gets a child trace of its own, linked to the calling run's
// trace by parent_trace_id and to the caller's task, sanitized and handed to
// n.Trace.Keep. Past the top-level run's budget of child traces
// (tracing.NewChildRecorder) it is not kept; the top-level trace counts the
// omission.
func (r *Runner) RunNested(ctx context.Context, n Nested) (json.RawMessage, error) {
	depth := Depth(ctx) + 1
	if depth > MaxDepth {
		return nil, pmlerr.New(pmlerr.ToolError,
			"capability %s: more than %d capabilities nested (does it call itself?)", n.Tool, MaxDepth).With("capability", n.Tool)
	}
	runCtx, vm, err := r.Admission.Enter(ctx, n.Tenant)
	if err != nil {
		return nil, err
	}
	defer vm.Exit()
	an := n.Analysis
	rec, keep := tracing.NewChildRecorder(runCtx, tracing.RecorderOptions{})
	// The child recorder wraps the VM's admission, so a call refused its
	// running place back (OVERLOADED) shows as that task's error.
	res, err := sandbox.Run(context.WithValue(runCtx, depthKey{}, depth), an.JS, n.Args, rec.Wrap(vm.Wrap(n.Call)), r.Limits)
	if keep {
		t := rec.Finish(tracing.Trace{ParentTraceID: tracing.TraceIDFrom(ctx), CapabilityFQDN: n.FQDN,
			DAG: an.WireDAGJSON(), Logs: res.Logs, ExecutedLocally: r.Local}, err) // tools_used: the tools called
		n.Trace.Keep(sanitizer(n.Trace.Sanitizer).Trace(t))
	}
	if err == nil {
		return res.Value, nil
	}
	var halt *sandbox.HaltError
	if errors.As(err, &halt) {
		return nil, err
	}
	inner, ok := pmlerr.As(an.MapError(err))
	if !ok {
		inner = pmlerr.Wrap(pmlerr.Internal, err)
	}
	if inner.Code == pmlerr.IntegrityError {
		// A version nobody approved, however deep: the run's own error, not a
		// tool failure the calling code could take for a result.
		return nil, inner
	}
	return nil, pmlerr.New(pmlerr.ToolError, "capability %s failed: %s", n.Tool, inner.Message).
		With("capability", n.Tool).With("capability_error_code", string(inner.Code))
}
