package traceapi

import (
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/pml-go/pml/internal/store"
)

// IngestLimits bound what one tenant (org/project) may post to POST
// /api/traces per minute (docs/limits.md "What a posted trace may say"), so
// that one project's member cannot slow another project. Each is a bucket
// that holds a minute's worth and refills continuously; a request it
// cannot pay for is 429 with Retry-After, and costs nothing. Zero: no
// limit on that account.
type IngestLimits struct {
	TracesPerMinute int
	BytesPerMinute  int64
}

// Defaults of the ingest limits, in `pml gateway`: far above what a
// package's Syncer sends for a busy project (100 traces per batch, each at
// most tracing.MaxTraceBytes), far below what a flood needs.
const (
	DefaultIngestTracesPerMinute = 3_000
	DefaultIngestBytesPerMinute  = 64 << 20
)

// DefaultIngestLimits are the limits of a gateway not told otherwise.
func DefaultIngestLimits() IngestLimits {
	return IngestLimits{TracesPerMinute: DefaultIngestTracesPerMinute, BytesPerMinute: DefaultIngestBytesPerMinute}
}

// Validate refuses negative limits.
func (l IngestLimits) Validate() error {
	if l.TracesPerMinute < 0 || l.BytesPerMinute < 0 {
		return fmt.Errorf("trace ingest limits: %d traces, %d bytes per minute: neither may be negative", l.TracesPerMinute, l.BytesPerMinute)
	}
	return nil
}

// maxIngestTenants bounds the buckets kept; past it, the full ones (idle
// tenants) are dropped, which loses nothing: a full bucket is the state a
// new one starts in.
const maxIngestTenants = 10_000

// ingestLimiter is IngestLimits' buckets, one pair per tenant.
type ingestLimiter struct {
	limits IngestLimits
	now    func() time.Time

	mu      sync.Mutex
	buckets map[store.Scope]*ingestBucket
}

type ingestBucket struct {
	traces, bytes float64 // what is left
	at            time.Time
}

func newIngestLimiter(l IngestLimits, now func() time.Time) *ingestLimiter {
	if l.TracesPerMinute <= 0 && l.BytesPerMinute <= 0 {
		return nil
	}
	return &ingestLimiter{limits: l, now: now, buckets: map[store.Scope]*ingestBucket{}}
}

// take charges sc for traces and bytes; when a bucket cannot pay, nothing
// is charged and the answer is how long until it can (at least a second).
// A request larger than a whole bucket is charged what the bucket holds
// when full, so it waits for a full bucket rather than forever.
func (l *ingestLimiter) take(sc store.Scope, traces int, bytes int64) (time.Duration, bool) {
	if l == nil {
		return 0, true
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[sc]
	if b == nil {
		if len(l.buckets) >= maxIngestTenants {
			l.dropFull(now)
		}
		b = &ingestBucket{traces: float64(l.limits.TracesPerMinute), bytes: float64(l.limits.BytesPerMinute), at: now}
		l.buckets[sc] = b
	}
	l.refill(b, now)
	var wait time.Duration
	check := func(left float64, want, perMinute float64) {
		if perMinute <= 0 {
			return
		}
		want = math.Min(want, perMinute)
		if left < want {
			wait = max(wait, time.Duration((want-left)/perMinute*float64(time.Minute)))
		}
	}
	check(b.traces, float64(traces), float64(l.limits.TracesPerMinute))
	check(b.bytes, float64(bytes), float64(l.limits.BytesPerMinute))
	if wait > 0 {
		return max(wait.Round(time.Second), time.Second), false
	}
	if l.limits.TracesPerMinute > 0 {
		b.traces -= math.Min(float64(traces), float64(l.limits.TracesPerMinute))
	}
	if l.limits.BytesPerMinute > 0 {
		b.bytes -= math.Min(float64(bytes), float64(l.limits.BytesPerMinute))
	}
	return 0, true
}

// refill adds what the time since b's last charge earned, up to a minute's
// worth.
func (l *ingestLimiter) refill(b *ingestBucket, now time.Time) {
	elapsed := now.Sub(b.at).Minutes()
	if elapsed <= 0 {
		return
	}
	b.at = now
	b.traces = math.Min(b.traces+elapsed*float64(l.limits.TracesPerMinute), float64(l.limits.TracesPerMinute))
	b.bytes = math.Min(b.bytes+elapsed*float64(l.limits.BytesPerMinute), float64(l.limits.BytesPerMinute))
}

// dropFull forgets the tenants whose buckets are full again.
func (l *ingestLimiter) dropFull(now time.Time) {
	for sc, b := range l.buckets {
		l.refill(b, now)
		if b.traces >= float64(l.limits.TracesPerMinute) && b.bytes >= float64(l.limits.BytesPerMinute) {
			delete(l.buckets, sc)
		}
	}
}
