package tools

import "context"

type callSeqKey struct{}

// WithCallSeq records n, the position of a call in the order the running code
// issued its mcp.* calls (0-based). The sandbox stamps it before it starts each
// call's goroutine, because concurrent calls complete in any order while the
// issue order is deterministic for the same code and results; replay journals
// key on it.
func WithCallSeq(ctx context.Context, n int) context.Context {
	return context.WithValue(ctx, callSeqKey{}, n)
}

// CallSeq returns the issue position stamped by WithCallSeq.
func CallSeq(ctx context.Context) (int, bool) {
	n, ok := ctx.Value(callSeqKey{}).(int)
	return n, ok
}
