package wire

import (
	"context"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Progress reports that a run finished its done-th tool call, tool; total
// is the number of calls the plan makes, 0 when it is not known.
type Progress func(ctx context.Context, done, total int, tool string)

// ProgressMeta is the _meta key of an execute result that says how many
// notifications/progress were sent for the request before its answer. A
// relay (the package forwarding a gateway run) waits until it has handled
// that many: the MCP SDK hands a caller the answer while notifications read
// before it may still wait in its queue.
const ProgressMeta = "pml/progress"

type progressKey struct{}

// WithProgress attaches the reporter of an execute request to ctx, where
// the run that serves the request finds it (ProgressFrom).
func WithProgress(ctx context.Context, p Progress) context.Context {
	if p == nil {
		return ctx
	}
	return context.WithValue(ctx, progressKey{}, p)
}

// ProgressFrom is the reporter attached to ctx, nil when the request asked
// for none.
func ProgressFrom(ctx context.Context) Progress {
	p, _ := ctx.Value(progressKey{}).(Progress)
	return p
}

// RequestProgress sends notifications/progress for req when its client gave
// a progress token, and is nil otherwise. A notification that cannot be
// sent is dropped: progress is advice and must never fail the run.
func RequestProgress(req *mcp.CallToolRequest) Progress {
	p, _ := countedProgress(req)
	return p
}

// countedProgress is RequestProgress and the count of notifications it has
// sent.
func countedProgress(req *mcp.CallToolRequest) (Progress, *atomic.Int64) {
	sent := new(atomic.Int64)
	if req == nil || req.Params == nil || req.Session == nil {
		return nil, sent
	}
	tok := req.Params.GetProgressToken()
	if tok == nil {
		return nil, sent
	}
	return func(ctx context.Context, done, total int, tool string) {
		if req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
			ProgressToken: tok, Progress: float64(done), Total: float64(total), Message: tool}) == nil {
			sent.Add(1)
		}
	}, sent
}

// withProgressSent notes in res how many notifications sent counted, when
// there were any.
func withProgressSent(res *mcp.CallToolResult, sent *atomic.Int64) *mcp.CallToolResult {
	if n := sent.Load(); n > 0 {
		if res.Meta == nil {
			res.Meta = mcp.Meta{}
		}
		res.Meta[ProgressMeta] = n
	}
	return res
}
