package workspace

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/pml-go/pml/internal/gatewayclient"
	"github.com/pml-go/pml/internal/runner"
	"github.com/pml-go/pml/internal/tracing"
	"github.com/pml-go/pml/internal/wire"
)

// TraceQueueMax bounds the trace outbox under .pml/traces: past it, the
// oldest trace is dropped (and counted) for each new one.
const TraceQueueMax = wire.MaxTraceQueue

// traceFlushTimeout bounds the delivery attempt on Close. Whatever it does
// not deliver stays on disk for the next start.
const traceFlushTimeout = 5 * time.Second

// traceBatchBytes keeps a batch under the gateway's request limit, with room
// for the {"traces":[...]} envelope.
const traceBatchBytes = wire.MaxRequestBytes - 4<<10

// traceSink hands the package's traces, top-level and nested, to the sync
// queue, sanitized with the secret values of now (.env and the package's
// key).
func (p *Workspace) traceSink() runner.Sink {
	return runner.Sink{Sanitizer: p.traceSanitizer(), Keep: p.submitTrace}
}

// submitTrace queues a sanitized trace for the gateway. The run does not
// wait for the delivery: the queue is on disk before this returns, and the
// syncer sends it in the background.
func (p *Workspace) submitTrace(t tracing.Trace) {
	if err := p.traces.queue.Push(t); err != nil {
		p.log.Warn("trace not queued", "trace_id", t.TraceID, "err", err)
		return
	}
	if p.traces.syncer != nil {
		p.traces.syncer.Notify()
	}
}

// TraceStats is the state of the trace outbox, for metrics.
type TraceStats struct {
	Depth   int   `json:"depth"`   // traces waiting to be delivered
	Dropped int64 `json:"dropped"` // traces lost to the bound or refused by the gateway
}

// TraceStats returns the outbox's depth and drop count.
func (p *Workspace) TraceStats() TraceStats {
	return TraceStats{Depth: p.traces.queue.Len(), Dropped: p.traces.queue.Dropped()}
}

// traceSync owns the outbox and the goroutine that delivers it.
type traceSync struct {
	queue  *tracing.Queue
	post   func(ctx context.Context, batch []tracing.Trace) error // nil: the gateway takes no traces
	syncer *tracing.Syncer
	opts   tracing.SyncOptions
	cancel context.CancelFunc
	done   chan struct{}

	mu       sync.Mutex
	reported int64 // drops already reported to the gateway
}

// startTraceSync opens .pml/traces and, when gw takes traces, starts the
// background delivery.
func startTraceSync(ws string, gw gatewayclient.Gateway, opts tracing.SyncOptions, log *slog.Logger) (*traceSync, error) {
	q, err := tracing.OpenQueue(filepath.Join(ws, StateDir, "traces"), TraceQueueMax)
	if err != nil {
		return nil, err
	}
	if opts.MaxBatchBytes <= 0 {
		opts.MaxBatchBytes = traceBatchBytes
	}
	if opts.Logger == nil {
		opts.Logger = log
	}
	ts := &traceSync{queue: q, opts: opts, done: make(chan struct{})}
	poster, ok := gw.(gatewayclient.TracePoster)
	if !ok {
		close(ts.done)
		return ts, nil
	}
	ts.post = ts.withBacklog(poster.PostTraces)
	if own, ok := gw.(gatewayclient.OwnTracePoster); ok {
		// Local mode: the gateway in this process takes the traces this
		// process sanitized as they are.
		ts.opts.PostOwn = ts.withBacklog(own.PostOwnTraces)
	}
	ts.syncer = tracing.NewSyncer(q, ts.post, ts.opts)
	ctx, cancel := context.WithCancel(context.Background())
	ts.cancel = cancel
	go func() {
		defer close(ts.done)
		ts.syncer.Run(ctx)
	}()
	// Traces left by an earlier run (a crash, an offline period) go now.
	ts.syncer.Notify()
	return ts, nil
}

// withBacklog makes post deliver a batch with the queue's backlog.
func (ts *traceSync) withBacklog(post func(context.Context, []tracing.Trace, gatewayclient.TraceBacklog) error) func(context.Context, []tracing.Trace) error {
	return func(ctx context.Context, batch []tracing.Trace) error {
		ts.mu.Lock()
		defer ts.mu.Unlock()
		dropped := ts.queue.Dropped()
		b := gatewayclient.TraceBacklog{Depth: max(ts.queue.Len()-len(batch), 0), Dropped: dropped - ts.reported}
		if err := post(ctx, batch, b); err != nil {
			return err
		}
		ts.reported = dropped
		return nil
	}
}

// errGiveUp ends the shutdown flush at its first failure.
var errGiveUp = errors.New("gateway unavailable at shutdown: traces kept for the next start")

// close stops the background delivery, makes one bounded attempt to
// deliver what is queued, and closes the queue. It does not retry: an unreachable gateway must not
// delay an exit, and the queue keeps the rest on disk.
func (ts *traceSync) close() error {
	defer ts.queue.Close()
	if ts.syncer == nil {
		return nil
	}
	ts.cancel()
	<-ts.done
	if ts.queue.Len() == 0 {
		return nil
	}
	opts := ts.opts
	opts.Sleep = func(context.Context, time.Duration) error { return errGiveUp }
	ctx, cancel := context.WithTimeout(context.Background(), traceFlushTimeout)
	defer cancel()
	if err := tracing.NewSyncer(ts.queue, ts.post, opts).Flush(ctx); err != nil {
		opts.Logger.Warn("traces not delivered at shutdown", "queued", ts.queue.Len(), "err", err)
	}
	return nil
}
