package workspace

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/pml-go/pml/internal/approval"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/wire"
)

// liveRun is a local run in a goroutine of its own, so that it can outlive
// the execute that started it. When a call needs an approval, the run
// parks: its VM waits in that call while the execute answers
// approval_required (or the approval form), and the continue_workflow that
// approves hands the answer to the waiting call, which then runs. Nothing
// runs twice and nothing is replayed (docs/security.md "Trust: approvals and secrets"). A run that ended
// while parked (its deadline passed) is resumed from its journal instead.
type liveRun struct {
	// events carries the run's pauses and then its answer to whichever
	// execute waits on it. Buffered for a pause and the answer, so the run
	// never blocks on a waiter that left.
	events  chan runEvent
	answers chan bool // the person's answer to the pause, at most one pending
	// turn lets one call ask at a time, so that calls in flight together
	// that need the same tool ask once.
	turn   chan struct{}
	done   chan struct{}
	cancel context.CancelFunc
	// progress reports to the execute waiting on the run now: each
	// continue_workflow may bring its own progress token.
	progress atomic.Pointer[wire.Progress]
}

type runEvent struct {
	pause  []approval.Item // a call waits for these; nil in the final event
	answer wire.Answer
}

// startRun starts a local run. Its context keeps ctx's values and deadline
// but not its cancellation: the execute waiting on it cancels it when its
// own caller goes (await), a parked run has no caller, and closing the
// workspace ends it.
func (p *Workspace) startRun(ctx context.Context, run func(context.Context) wire.Answer) *liveRun {
	lr := &liveRun{events: make(chan runEvent, 2), answers: make(chan bool, 1), turn: make(chan struct{}, 1), done: make(chan struct{})}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	if d, ok := ctx.Deadline(); ok {
		runCtx, cancel = context.WithDeadline(context.WithoutCancel(ctx), d)
	}
	lr.cancel = cancel
	runCtx = withLiveRun(wire.WithProgress(runCtx, lr.reportProgress), lr)
	stopOnClose := context.AfterFunc(p.closing, cancel)
	p.runs.Add(1)
	p.runWorkers.Go(func() {
		reserveStack()
		defer p.runs.Done()
		defer close(lr.done)
		defer cancel()
		defer stopOnClose()
		lr.events <- runEvent{answer: run(runCtx)}
	})
	return lr
}

func (lr *liveRun) reportProgress(ctx context.Context, done, total int, tool string) {
	if p := lr.progress.Load(); p != nil {
		(*p)(ctx, done, total, tool)
	}
}

// await waits for the run's next pause or its answer. If ctx ends first
// (the AI client cancelled), the run is cancelled and its answer, CANCELLED,
// is the answer.
func (lr *liveRun) await(ctx context.Context) runEvent {
	if p := wire.ProgressFrom(ctx); p != nil {
		lr.progress.Store(&p)
	} else {
		lr.progress.Store(nil)
	}
	stop, cancelled := ctx.Done(), false
	for {
		select {
		case ev := <-lr.events:
			if ev.pause != nil && cancelled {
				continue // cancelled while it paused: its answer follows
			}
			return ev
		case <-stop:
			lr.cancel()
			stop, cancelled = nil, true
		}
	}
}

// ask parks the run: the execute waiting on it answers approval_required
// with it, and the call waits here for the person's answer, which a
// continue_workflow brings (resume). A call whose approval a call beside
// it got meanwhile does not ask.
func (lr *liveRun) ask(ctx context.Context, g *grants, it approval.Item) error {
	select {
	case lr.turn <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-lr.turn }()
	if g.covers(it) {
		return nil
	}
	items := []approval.Item{it}
	lr.events <- runEvent{pause: items}
	t := time.NewTimer(parkTTL)
	defer t.Stop()
	select {
	case ok := <-lr.answers:
		if !ok {
			return declined{items: items}
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return askTimeout(items, parkTTL)
	}
}

// resume hands the person's answer to the parked call. False when the run
// is no longer parked: it ended (its deadline passed while it waited).
func (lr *liveRun) resume(approved bool) bool {
	select {
	case <-lr.done:
		return false
	default:
	}
	select {
	case lr.answers <- approved:
		return true
	default:
		return false
	}
}

// parkTTL bounds how long a run waits for its answer: the workflow's own
// lifetime, after which it could not be continued anyway.
const parkTTL = approval.DefaultTTL

// askTimeout is the error of a question nobody answered in time.
func askTimeout(items []approval.Item, after time.Duration) error {
	return pmlerr.New(pmlerr.ExecutionTimeout, "nobody answered the approval of %s within %s", itemSubjects(items), after)
}
