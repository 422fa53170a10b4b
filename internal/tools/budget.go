package tools

import (
	"context"

	"github.com/pml-go/pml/internal/pmlerr"
)

type byteBudgetKey struct{}

// WithByteBudget records how many bytes a call's result may still take: an
// execution has a budget for the bytes moved through its mcp.* calls
// (README "Limits"), and a tool that knows its result would cross it fails
// at once instead of building it.
func WithByteBudget(ctx context.Context, n int64) context.Context {
	return context.WithValue(ctx, byteBudgetKey{}, n)
}

// ByteBudget returns the budget WithByteBudget recorded, if any.
func ByteBudget(ctx context.Context) (int64, bool) {
	n, ok := ctx.Value(byteBudgetKey{}).(int64)
	return n, ok
}

// CheckByteBudget fails with MEMORY_LIMIT when a result of about n bytes
// would cross the call's byte budget.
func CheckByteBudget(ctx context.Context, tool string, n int64) error {
	if left, ok := ByteBudget(ctx); ok && n > left {
		return pmlerr.New(pmlerr.MemoryLimit, "%s: its result (about %d bytes) is over what the execution may still move through mcp.* calls (%d bytes)", tool, n, left).With("tool", tool)
	}
	return nil
}
