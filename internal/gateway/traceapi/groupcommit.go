package traceapi

import (
	"context"
	"runtime"
	"sync"

	"github.com/pml-go/pml/internal/store"
)

// maxGroup bounds one group commit: enough to take a busy gateway's
// concurrent runs in one transaction, few enough that a transaction stays a
// few milliseconds.
const maxGroup = 128

// groupCommit stores the gateway's own runs' traces in shared transactions
// (docs/performance.md "Group commit"). Each run still waits until its trace
// is committed before it is answered, so the durability promise is the
// same: an answered run's trace survives the replica. What changes is that
// runs ending while a transaction is under way wait for it to finish and
// then go in the next one together, so a busy gateway pays one transaction,
// one commit and one set of rollup upserts per group instead of per run. An
// idle one pays nothing more: a lone trace is written at once.
//
// There is no background goroutine: the run that finds no transaction under
// way leads, writes the group, and hands the lead to the first trace that
// arrived meanwhile.
type groupCommit struct {
	put func(ctx context.Context, traces []store.Trace) error

	mu      sync.Mutex
	leading bool           // a group is being written
	queue   []*queuedTrace // arrived while it was
}

type queuedTrace struct {
	row store.Trace
	// done receives the trace's outcome, or lead: the trace's run is to
	// write the next group itself.
	done chan groupTurn
}

type groupTurn struct {
	err  error
	lead bool
}

// store writes row in the next group and returns that group's outcome. ctx
// bounds the write when this call leads; a follower waits for its leader,
// whose context bounds the write it waits for.
func (g *groupCommit) store(ctx context.Context, row store.Trace) error {
	q := &queuedTrace{row: row, done: make(chan groupTurn, 1)}
	g.mu.Lock()
	g.queue = append(g.queue, q)
	if g.leading {
		g.mu.Unlock()
		if turn := <-q.done; !turn.lead {
			return turn.err
		}
		g.mu.Lock()
	}
	g.leading = true
	// The leader yields once before it takes its group, so the runs this
	// process has ready to finish (their goroutines runnable on its
	// processors) queue their traces first and share the transaction. Without
	// it a busy gateway settled into groups of one: a lone trace's short
	// transaction left no time for the next to arrive, and three in four
	// transactions held a single trace (docs/performance.md "The gateway's
	// own CPU"). An idle process has nothing else to run, so the yield
	// returns at once and a lone trace is still written without waiting.
	g.mu.Unlock()
	runtime.Gosched()
	g.mu.Lock()
	group := g.queue[:min(len(g.queue), maxGroup)]
	g.queue = g.queue[len(group):]
	g.mu.Unlock()

	g.write(ctx, group) // q is group[0]: a leader is the queue's first

	g.mu.Lock()
	if len(g.queue) > 0 {
		g.queue[0].done <- groupTurn{lead: true}
	} else {
		g.leading = false
		g.queue = nil
	}
	g.mu.Unlock()
	return (<-q.done).err
}

// write stores a group in one transaction and tells each trace's run the
// outcome. Should the transaction fail, each trace is tried alone, so one
// trace the store refuses costs no other its place.
func (g *groupCommit) write(ctx context.Context, group []*queuedTrace) {
	rows := make([]store.Trace, len(group))
	for i, q := range group {
		rows[i] = q.row
	}
	err := g.put(ctx, rows)
	if err == nil || len(group) == 1 || ctx.Err() != nil {
		for _, q := range group {
			q.done <- groupTurn{err: err}
		}
		return
	}
	for _, q := range group {
		q.done <- groupTurn{err: g.put(ctx, []store.Trace{q.row})}
	}
}
