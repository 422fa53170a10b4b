package tracing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"
)

// SyncOptions tune a Syncer. Zero fields take the defaults.
type SyncOptions struct {
	BatchSize int // traces per POST: default and maximum 100
	// MaxBatchBytes: a batch is cut before its traces' JSON passes this
	// (the caller leaves room for the envelope): default 4 MiB. A trace
	// over it, or over MaxTraceBytes, is bounded before it is sent.
	MaxBatchBytes int
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
	// PostOwn, when set, delivers the batches made only of traces this
	// process pushed and the Queue held in memory since: sanitized, as Push
	// wants them, and never read back from a log another process or
	// version may have written. A gateway in this process may store them
	// as they are. Traces adopted from a log go to the Syncer's post, in
	// batches of their own.
	PostOwn func(ctx context.Context, batch []Trace) error
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
		batch, sizes, err := s.q.peek(s.opts.BatchSize)
		if err != nil {
			return err
		}
		if len(batch) == 0 {
			return nil
		}
		post := s.post
		if s.opts.PostOwn != nil {
			// A batch is all held traces (sizes known) or all read back.
			own := sizes[0] >= 0
			n := 1
			for n < len(sizes) && (sizes[n] >= 0) == own {
				n++
			}
			batch, sizes = batch[:n], sizes[:n]
			if own {
				post = s.opts.PostOwn
			}
		}
		if err := s.send(ctx, post, s.cut(batch, sizes)); err != nil {
			return err
		}
	}
}

// maxTraceBytes is the most one trace may weigh in a batch: MaxTraceBytes,
// or less when a batch is smaller.
func (s *Syncer) maxTraceBytes() int {
	return min(MaxTraceBytes, s.opts.MaxBatchBytes)
}

// cut shortens batch so its JSON stays under MaxBatchBytes. A trace heavier
// than one batch allows (queued by an older version, or under a smaller
// batch limit) is bounded first (Bound): cut, never dropped. sizes are the
// traces' JSON lengths where the queue knows them (peek), else -1.
func (s *Syncer) cut(batch []Trace, sizes []int) []Trace {
	total := 0
	out := make([]Trace, 0, len(batch))
	for i, t := range batch {
		n, err := sizes[i], error(nil)
		if n < 0 {
			n, err = jsonLen(t)
		}
		if err == nil && n > s.maxTraceBytes() {
			t = Bound(t, Limits{MaxBytes: s.maxTraceBytes()})
			n, err = jsonLen(t)
		}
		if err != nil {
			// Not encodable: sent alone, for the gateway to refuse.
			if len(out) == 0 {
				return []Trace{t}
			}
			return out
		}
		total += n + 1
		if total > s.opts.MaxBatchBytes && len(out) > 0 {
			return out
		}
		out = append(out, t)
	}
	return out
}

func jsonLen(t Trace) (int, error) {
	b, err := t.AppendJSON(nil)
	return len(b), err
}

// send posts batch with post. A permanent rejection of several traces is bisected so
// one bad trace does not cost the others. A single trace refused as too
// large (413) is cut to half its size and sent again, down to the bare
// trace; any other rejected single trace is discarded (and counted by the
// queue) so it cannot block the queue forever.
func (s *Syncer) send(ctx context.Context, post func(context.Context, []Trace) error, batch []Trace) error {
	err := post(ctx, batch)
	if err == nil {
		return s.q.Ack(traceIDs(batch))
	}
	var perm *PermanentError
	if !errors.As(err, &perm) {
		return err
	}
	if len(batch) == 1 && perm.Status == http.StatusRequestEntityTooLarge {
		if smaller, ok := halve(batch[0]); ok {
			s.opts.Logger.Info("trace too large for the gateway, sending it cut", "trace_id", batch[0].TraceID)
			return s.send(ctx, post, []Trace{smaller})
		}
	}
	if len(batch) == 1 {
		s.opts.Logger.Warn("trace rejected by the gateway, dropped", "trace_id", batch[0].TraceID, "err", err)
		return s.q.Discard(traceIDs(batch))
	}
	half := len(batch) / 2
	if err := s.send(ctx, post, batch[:half]); err != nil {
		return err
	}
	return s.send(ctx, post, batch[half:])
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

// halve bounds t to half its JSON size; ok is false when Bound cannot make
// it any smaller.
func halve(t Trace) (Trace, bool) {
	n, err := jsonLen(t)
	if err != nil {
		return t, false
	}
	smaller := Bound(t, Limits{MaxBytes: n / 2})
	m, err := jsonLen(smaller)
	return smaller, err == nil && m < n
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
