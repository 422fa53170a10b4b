package runner

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"

	"github.com/pml-go/pml/internal/analysis"
	"github.com/pml-go/pml/internal/sandbox"
	"github.com/pml-go/pml/internal/tools"
	"github.com/pml-go/pml/internal/wire"
)

// withProgress reports each finished call of call to p: how many calls have
// finished, out of the plan's call count when that is known. A call that
// halts the run (an approval to ask for) did not run and is not reported,
// nor is one that ends a cancelled run (a call's own timeout is reported).
func withProgress(runCtx context.Context, call tools.CallFunc, an *analysis.Analysis, p wire.Progress) tools.CallFunc {
	if p == nil {
		return call
	}
	total := plannedCalls(an)
	var done atomic.Int64
	return func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		out, err := call(ctx, tool, args)
		var halt *sandbox.HaltError
		if errors.As(err, &halt) || runCtx.Err() != nil {
			return out, err // a cancelled run's client has stopped listening
		}
		n := int(done.Add(1))
		t := total
		if n > t {
			t = 0 // a call site reached more often than the plan shows (a helper called twice): unknown
		}
		p(ctx, n, t, tool)
		return out, err
	}
}

// plannedCalls is how many calls the code makes when the analysis can tell:
// one per call site, unless a loop repeats one, a branch may skip one, or
// the code reaches tools the analysis cannot see. 0 means unknown.
func plannedCalls(an *analysis.Analysis) int {
	if an.Dynamic || len(an.DAG.Decisions) > 0 {
		return 0
	}
	for _, t := range an.DAG.Tasks {
		if len(t.Loops) > 0 {
			return 0
		}
	}
	return len(an.DAG.Tasks)
}
