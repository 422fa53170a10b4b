package tracing

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"
)

// SyncOptions tune a Syncer. Zero fields take the defaults.
type SyncOptions struct {
	BatchSize     int           // traces per POST: default and maximum 100
	MaxBatchBytes int           // a batch is cut before its JSON passes this: default 4 MiB
	Interval      time.Duration // how often Run looks at the queue without Notify: default 30 s
	// Linger is how long Run waits after a Notify before it sends, so the
	// traces of a burst of executions go in one batch instead of one POST
	// (and one gateway write) each: default 200 ms.
	Linger        time.Duration
	MinBackoff    time.Duration // first retry delay: default 1 s
	MaxBackoff    time.Duration // retry delay cap: default 5 min
	MaxRetryAfter time.Duration // cap on a server-requested delay: default 1 h
	// Sleep waits d or until ctx is done (then it returns ctx's error);
	// tests inject one that returns at once.
	Sleep func(ctx context.Context, d time.Duration) error
	// Rand returns a float in [0,1) for jitter; math/rand/v2 by default.
	Rand   func() float64
	Logger *slog.Logger
}

const maxBatch = 100

func (o SyncOptions) withDefaults() SyncOptions {
	if o.BatchSize <= 0 || o.BatchSize > maxBatch {
		o.BatchSize = maxBatch
	}
	if o.MaxBatchBytes <= 0 {
		o.MaxBatchBytes = 4 << 20
	}
	if o.Linger <= 0 {
		o.Linger = 200 * time.Millisecond
	}
	if o.Interval <= 0 {
		o.Interval = 30 * time.Second
	}
	if o.MinBackoff <= 0 {
		o.MinBackoff = time.Second
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 5 * time.Minute
	}
	if o.MaxRetryAfter <= 0 {
		o.MaxRetryAfter = time.Hour
	}
	if o.Sleep == nil {
		o.Sleep = sleepCtx
	}
	if o.Rand == nil {
		o.Rand = rand.Float64
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// Syncer delivers a Queue to the gateway: batches in queue order, acked only
// after the gateway accepted them, retried with capped exponential backoff
// and jitter, honouring a server's Retry-After.
type Syncer struct {
	q    *Queue
	post func(ctx context.Context, batch []Trace) error
	opts SyncOptions
	wake chan struct{}

	mu       sync.Mutex // one delivery at a time (Run and Flush)
	failures int        // consecutive failed attempts, under mu
}

// NewSyncer returns a Syncer for q; post delivers one batch (HTTPPoster).
func NewSyncer(q *Queue, post func(ctx context.Context, batch []Trace) error, opts SyncOptions) *Syncer {
	return &Syncer{q: q, post: post, opts: opts.withDefaults(), wake: make(chan struct{}, 1)}
}

// Notify wakes Run after a Push. It never blocks.
func (s *Syncer) Notify() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Run delivers until ctx is done: whenever notified or every Interval, and
// after a failure once its backoff has passed.
func (s *Syncer) Run(ctx context.Context) {
	for {
		delay, err := s.attempt(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			s.opts.Logger.Warn("trace sync failed, will retry", "err", err, "retry_in", delay, "queued", s.q.Len())
			if s.opts.Sleep(ctx, delay) != nil {
				return
			}
			continue
		}
		t := time.NewTimer(s.opts.Interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-s.wake:
			t.Stop()
			if s.opts.Sleep(ctx, s.opts.Linger) != nil {
				return
			}
		case <-t.C:
		}
	}
}

// Flush delivers everything queued now, retrying as Run does, until the
// queue is empty or ctx is done; use it on shutdown with a deadline.
func (s *Syncer) Flush(ctx context.Context) error {
	for {
		delay, err := s.attempt(ctx)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("flush traces: %d left: %w", s.q.Len(), ctx.Err())
		}
		if serr := s.opts.Sleep(ctx, delay); serr != nil {
			return fmt.Errorf("flush traces: %d left: %w (last error: %v)", s.q.Len(), serr, err)
		}
	}
}

// attempt drains the queue once and, on failure, returns how long to wait.
func (s *Syncer) attempt(ctx context.Context) (time.Duration, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.drain(ctx)
	if err == nil {
		s.failures = 0
		return 0, nil
	}
	s.failures++
	return s.delay(err), err
}

func (s *Syncer) drain(ctx context.Context) error {
	for {
		batch, err := s.q.Peek(s.opts.BatchSize)
		if err != nil {
			return err
		}
		if len(batch) == 0 {
			return nil
		}
		if err := s.send(ctx, s.cut(batch)); err != nil {
			return err
		}
	}
}

// cut shortens batch so its JSON stays under MaxBatchBytes (keeping at least
// one trace: a single oversized trace is the gateway's to accept or reject).
func (s *Syncer) cut(batch []Trace) []Trace {
	total := 0
	for i, t := range batch {
		b, err := json.Marshal(t)
		if err != nil {
			return batch[:max(i, 1)]
		}
		total += len(b) + 1
		if total > s.opts.MaxBatchBytes && i > 0 {
			return batch[:i]
		}
	}
	return batch
}

// send posts batch. A permanent rejection of several traces is bisected so
// one bad trace does not cost the others; a rejected single trace is
// discarded (and counted by the queue) so it cannot block the queue forever.
func (s *Syncer) send(ctx context.Context, batch []Trace) error {
	err := s.post(ctx, batch)
	if err == nil {
		return s.q.Ack(traceIDs(batch))
	}
	var perm *PermanentError
	if !errors.As(err, &perm) {
		return err
	}
	if len(batch) == 1 {
		s.opts.Logger.Warn("trace rejected by the gateway, dropped", "trace_id", batch[0].TraceID, "err", err)
		return s.q.Discard(traceIDs(batch))
	}
	half := len(batch) / 2
	if err := s.send(ctx, batch[:half]); err != nil {
		return err
	}
	return s.send(ctx, batch[half:])
}

// delay is the server's Retry-After when it gave one, else exponential
// backoff from MinBackoff, capped at MaxBackoff, with "equal jitter" (half
// fixed, half random) so many packages do not retry in step.
func (s *Syncer) delay(err error) time.Duration {
	var ra *RetryAfterError
	if errors.As(err, &ra) && ra.Delay > 0 {
		return min(ra.Delay, s.opts.MaxRetryAfter)
	}
	d := s.opts.MinBackoff
	for i := 1; i < s.failures && d < s.opts.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, s.opts.MaxBackoff)
	return d/2 + time.Duration(s.opts.Rand()*float64(d/2))
}

func traceIDs(batch []Trace) []string {
	ids := make([]string, len(batch))
	for i, t := range batch {
		ids[i] = t.TraceID
	}
	return ids
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
