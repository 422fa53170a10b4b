package wire

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Progress reports that a run finished its done-th tool call, tool; total
// is the number of calls the plan makes, 0 when it is not known.
type Progress func(ctx context.Context, done, total int, tool string)

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
	if req == nil || req.Params == nil || req.Session == nil {
		return nil
	}
	tok := req.Params.GetProgressToken()
	if tok == nil {
		return nil
	}
	return func(ctx context.Context, done, total int, tool string) {
		_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
			ProgressToken: tok, Progress: float64(done), Total: float64(total), Message: tool})
	}
}
