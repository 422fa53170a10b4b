package tools

import (
	"context"
	"sync/atomic"

	"github.com/pml-go/pml/internal/pmlerr"
)

// Budget bounds the bytes one execution moves through its mcp.* calls
// (docs/limits.md): the sandbox takes each call's arguments and result from
// it, and a tool that would build a large result reserves room for it first,
// so that calls running at once cannot together build more than is left. It
// is safe for concurrent use.
type Budget struct {
	limit int64
	used  atomic.Int64 // bytes taken plus bytes reserved
}

// NewBudget returns a budget of limit bytes.
func NewBudget(limit int64) *Budget { return &Budget{limit: limit} }

// Take counts n bytes moved for good; it reports false, taking nothing, when
// they do not fit.
func (b *Budget) Take(n int64) bool {
	for {
		used := b.used.Load()
		if used+n > b.limit {
			return false
		}
		if b.used.CompareAndSwap(used, used+n) {
			return true
		}
	}
}

// Left is what is neither taken nor reserved.
func (b *Budget) Left() int64 { return b.limit - b.used.Load() }

// Limit is the whole budget.
func (b *Budget) Limit() int64 { return b.limit }

type budgetKey struct{}

// WithBudget makes b the budget of the calls under ctx.
func WithBudget(ctx context.Context, b *Budget) context.Context {
	return context.WithValue(ctx, budgetKey{}, b)
}

// Reserve holds n bytes of the call's budget while a tool builds a result of
// about that size; release gives them back (the sandbox then takes what the
// result really is). Without a budget in ctx it reserves nothing.
func Reserve(ctx context.Context, tool string, n int64) (release func(), err error) {
	b, _ := ctx.Value(budgetKey{}).(*Budget)
	if b == nil {
		return func() {}, nil
	}
	if !b.Take(n) {
		return nil, overBudget(tool, n, b)
	}
	return func() { b.used.Add(-n) }, nil
}

// CheckFits fails with MEMORY_LIMIT when a result of n bytes no longer fits
// the call's budget, before the tool hands it over.
func CheckFits(ctx context.Context, tool string, n int64) error {
	if b, _ := ctx.Value(budgetKey{}).(*Budget); b != nil && n > b.Left() {
		return overBudget(tool, n, b)
	}
	return nil
}

func overBudget(tool string, n int64, b *Budget) error {
	return pmlerr.New(pmlerr.MemoryLimit, "%s: its result (about %d bytes) does not fit what is left of the execution's budget of %d bytes moved through mcp.* calls", tool, n, b.limit).With("tool", tool)
}
