package registry

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

// RunNested runs a capability's analysed code as one call of its caller's
// run: in its own VM with its own limits, args bound to the call's
// arguments, every mcp.* call going through call (the caller's bridge).
// Its failure is the caller's TOOL_ERROR, which the calling code may catch;
// the capability's own error code is kept in the "capability_error_code"
// detail. A halt (an approval to ask for) passes through unchanged.
//
// The nested run gets a child trace of its own, linked to the calling run's
// trace by parent_trace_id and to the caller's task; record receives it
// (unsanitized: the caller sanitizes and keeps it). Past the top-level run's
// budget of child traces (tracing.NewChildRecorder) record is not called;
// the top-level trace counts the omission.
func RunNested(ctx context.Context, toolID, fqdn string, an *analysis.Analysis, args json.RawMessage, call tools.CallFunc, lim sandbox.Limits, record func(tracing.Trace)) (json.RawMessage, error) {
	depth := Depth(ctx) + 1
	if depth > MaxDepth {
		return nil, pmlerr.New(pmlerr.ToolError,
			"capability %s: more than %d capabilities nested (does it call itself?)", toolID, MaxDepth).With("capability", toolID)
	}
	rec, keep := tracing.NewChildRecorder(ctx, tracing.RecorderOptions{})
	res, err := sandbox.Run(context.WithValue(ctx, depthKey{}, depth), an.JS, args, rec.Wrap(call), lim)
	if keep {
		dag, _ := json.Marshal(an.DAG)
		record(rec.Finish(tracing.Trace{ParentTraceID: tracing.TraceIDFrom(ctx), CapabilityFQDN: fqdn,
			ToolsUsed: an.Tools, DAG: dag, Logs: res.Logs}, err))
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
	return nil, pmlerr.New(pmlerr.ToolError, "capability %s failed: %s", toolID, inner.Message).
		With("capability", toolID).With("capability_error_code", string(inner.Code))
}
