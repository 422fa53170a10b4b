package tracing

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"
)

// collector is a real trace-ingest server on loopback. respond decides the
// answer to each request (n counts from 1); accepted traces are recorded.
type collector struct {
	mu       sync.Mutex
	batches  [][]string
	accepted []string
	requests int
	respond  func(n int, ids []string, w http.ResponseWriter) bool // true: accepted
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Traces []Trace `json:"traces"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.requests++
	batch := traceIDs(body.Traces)
	c.batches = append(c.batches, batch)
	if c.respond == nil || c.respond(c.requests, batch, w) {
		c.accepted = append(c.accepted, batch...)
		w.WriteHeader(http.StatusOK)
	}
}

func (c *collector) snapshot() (accepted []string, batches [][]string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.accepted), slices.Clone(c.batches)
}

// sleeps records requested waits and returns at once.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
	on func(n int) // called after each recorded sleep
}

func (s *sleeps) Sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	n := len(s.d)
	s.mu.Unlock()
	if s.on != nil {
		s.on(n)
	}
	return ctx.Err()
}

func pushN(t *testing.T, q *Queue, n int) []string {
	t.Helper()
	var want []string
	for i := range n {
		id := NewTraceID()
		mustPush(t, q, trace(id, ""))
		want = append(want, id)
		_ = i
	}
	return want
}

func TestSyncerBatchesOfAtMost100(t *testing.T) {
	c := &collector{}
	srv := httptest.NewServer(c)
	defer srv.Close()
	q := mustOpen(t, t.TempDir(), 1000)
	want := pushN(t, q, 250)
	s := NewSyncer(q, HTTPPoster(srv.Client(), srv.URL, "k"), SyncOptions{})
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	accepted, batches := c.snapshot()
	var sizes []int
	for _, b := range batches {
		sizes = append(sizes, len(b))
	}
	if !slices.Equal(sizes, []int{100, 100, 50}) {
		t.Errorf("batch sizes %v", sizes)
	}
	if !slices.Equal(accepted, want) {
		t.Errorf("delivered %d traces, not the %d pushed in order", len(accepted), len(want))
	}
	if q.Len() != 0 {
		t.Errorf("queue still holds %d", q.Len())
	}
}

func TestSyncerCutsBatchesBySize(t *testing.T) {
	c := &collector{}
	srv := httptest.NewServer(c)
	defer srv.Close()
	q := mustOpen(t, t.TempDir(), 100)
	pushN(t, q, 10)
	one, _ := json.Marshal(trace(NewTraceID(), ""))
	s := NewSyncer(q, HTTPPoster(srv.Client(), srv.URL, "k"), SyncOptions{MaxBatchBytes: 3*len(one) + 10})
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, batches := c.snapshot()
	if len(batches) != 4 || len(batches[0]) != 3 || len(batches[3]) != 1 {
		t.Errorf("batches %v", batches)
	}
}

func TestSyncerHonoursRetryAfter(t *testing.T) {
	c := &collector{respond: func(n int, _ []string, w http.ResponseWriter) bool {
		if n == 1 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return false
		}
		return true
	}}
	srv := httptest.NewServer(c)
	defer srv.Close()
	q := mustOpen(t, t.TempDir(), 100)
	want := pushN(t, q, 3)
	sl := &sleeps{}
	s := NewSyncer(q, HTTPPoster(srv.Client(), srv.URL, "k"), SyncOptions{Sleep: sl.Sleep})
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sl.d, []time.Duration{time.Second}) {
		t.Errorf("slept %v, want [1s]", sl.d)
	}
	if accepted, _ := c.snapshot(); !slices.Equal(accepted, want) {
		t.Errorf("accepted %v", accepted)
	}
}

// The same with the real clock: the retry comes about a second later.
func TestSyncerRetryAfterRealTime(t *testing.T) {
	var first, second time.Time
	c := &collector{respond: func(n int, _ []string, w http.ResponseWriter) bool {
		if n == 1 {
			first = time.Now()
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return false
		}
		second = time.Now()
		return true
	}}
	srv := httptest.NewServer(c)
	defer srv.Close()
	q := mustOpen(t, t.TempDir(), 100)
	pushN(t, q, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := NewSyncer(q, HTTPPoster(srv.Client(), srv.URL, "k"), SyncOptions{}).Flush(ctx); err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	gap := second.Sub(first)
	c.mu.Unlock()
	if gap < 950*time.Millisecond || gap > 3*time.Second {
		t.Errorf("retried after %v, want ~1s", gap)
	}
}

func TestSyncerServerDownThenBack(t *testing.T) {
	// Reserve a loopback port, then free it: nothing listens there yet.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()

	c := &collector{}
	srv := httptest.NewUnstartedServer(c)
	defer srv.Close()
	sl := &sleeps{on: func(n int) {
		if n == 4 { // the gateway comes back after four failed attempts
			l, err := net.Listen("tcp", addr)
			if err != nil {
				t.Errorf("re-listen: %v", err)
				return
			}
			srv.Listener = l
			srv.Start()
		}
	}}
	q := mustOpen(t, t.TempDir(), 1000)
	want := pushN(t, q, 120)
	s := NewSyncer(q, HTTPPoster(&http.Client{Timeout: 5 * time.Second}, "http://"+addr, "k"), SyncOptions{
		Sleep:      sl.Sleep,
		Rand:       func() float64 { return 0.5 },
		MinBackoff: time.Second,
		MaxBackoff: 4 * time.Second,
	})
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Equal jitter at 0.5: 3/4 of 1s, 2s, 4s, then capped at 4s.
	wantSleeps := []time.Duration{750 * time.Millisecond, 1500 * time.Millisecond, 3 * time.Second, 3 * time.Second}
	if !slices.Equal(sl.d, wantSleeps) {
		t.Errorf("backoff %v, want %v", sl.d, wantSleeps)
	}
	accepted, _ := c.snapshot()
	if !slices.Equal(accepted, want) || q.Len() != 0 || q.Dropped() != 0 {
		t.Errorf("delivered %d of %d, queue %d, dropped %d", len(accepted), len(want), q.Len(), q.Dropped())
	}
}

func TestSyncerDropsOnlyRejectedTrace(t *testing.T) {
	q := mustOpen(t, t.TempDir(), 100)
	want := pushN(t, q, 10)
	bad := want[6]
	c := &collector{respond: func(_ int, ids []string, w http.ResponseWriter) bool {
		if slices.Contains(ids, bad) {
			http.Error(w, "invalid trace", http.StatusBadRequest)
			return false
		}
		return true
	}}
	srv := httptest.NewServer(c)
	defer srv.Close()
	s := NewSyncer(q, HTTPPoster(srv.Client(), srv.URL, "k"), SyncOptions{})
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	accepted, _ := c.snapshot()
	slices.Sort(accepted)
	wantOK := slices.DeleteFunc(slices.Clone(want), func(id string) bool { return id == bad })
	slices.Sort(wantOK)
	if !slices.Equal(accepted, wantOK) || q.Len() != 0 || q.Dropped() != 1 {
		t.Errorf("accepted %d, queue %d, dropped %d", len(accepted), q.Len(), q.Dropped())
	}
}

func TestSyncerRunNotifyAndFlushOnShutdown(t *testing.T) {
	c := &collector{}
	srv := httptest.NewServer(c)
	defer srv.Close()
	q := mustOpen(t, t.TempDir(), 100)
	s := NewSyncer(q, HTTPPoster(srv.Client(), srv.URL, "k"), SyncOptions{Interval: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()

	first := pushN(t, q, 2)
	s.Notify()
	deadline := time.Now().Add(5 * time.Second)
	// Wait for the ack, not just the upload: a batch the gateway took but the
	// syncer had not acked when Run stopped is sent again (at least once).
	for {
		if accepted, _ := c.snapshot(); len(accepted) == 2 && q.Len() == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("Notify did not trigger a sync")
		}
		time.Sleep(5 * time.Millisecond)
	}

	// Shutdown: pushed without Notify, Run stopped, Flush delivers the rest.
	late := pushN(t, q, 3)
	cancel()
	<-done
	fctx, fcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer fcancel()
	if err := s.Flush(fctx); err != nil {
		t.Fatal(err)
	}
	accepted, _ := c.snapshot()
	if !slices.Equal(accepted, append(first, late...)) || q.Len() != 0 {
		t.Errorf("accepted %v, queue %d", accepted, q.Len())
	}
}

func TestSyncerFlushBoundedByContext(t *testing.T) {
	c := &collector{respond: func(int, []string, http.ResponseWriter) bool { return false }}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.ServeHTTP(w, r)
	}))
	defer srv.Close()
	c.respond = func(_ int, _ []string, w http.ResponseWriter) bool {
		w.WriteHeader(http.StatusInternalServerError)
		return false
	}
	q := mustOpen(t, t.TempDir(), 100)
	pushN(t, q, 5)
	s := NewSyncer(q, HTTPPoster(srv.Client(), srv.URL, "k"), SyncOptions{MinBackoff: 20 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := s.Flush(ctx); err == nil {
		t.Fatal("Flush against a failing server returned nil")
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("Flush took %v past its deadline", el)
	}
	if q.Len() != 5 || q.Dropped() != 0 {
		t.Errorf("a failing server lost traces: queue %d dropped %d", q.Len(), q.Dropped())
	}
	if _, batches := c.snapshot(); len(batches) < 2 {
		t.Errorf("only %d attempts before the deadline", len(batches))
	}
}

// With PostOwn, the traces this process pushed go to it and the traces
// adopted from an ended process's log to post, never in one batch; all are
// delivered, oldest first.
func TestSyncerPostsOwnTracesApart(t *testing.T) {
	dir := t.TempDir()
	old := mustOpen(t, dir, 100)
	mustPush(t, old, trace("adopted1", ""), trace("adopted2", ""))
	crash(old)
	q := mustOpen(t, dir, 100)
	defer q.Close()
	mustPush(t, q, trace("own1", ""), trace("own2", ""))
	var posted, own [][]string
	record := func(into *[][]string) func(context.Context, []Trace) error {
		return func(_ context.Context, batch []Trace) error {
			*into = append(*into, traceIDs(batch))
			return nil
		}
	}
	s := NewSyncer(q, record(&posted), SyncOptions{PostOwn: record(&own)})
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(posted, [][]string{{"adopted1", "adopted2"}}, slices.Equal) || !slices.EqualFunc(own, [][]string{{"own1", "own2"}}, slices.Equal) {
		t.Errorf("posted %v, own %v", posted, own)
	}
	if q.Len() != 0 {
		t.Errorf("queue still holds %d", q.Len())
	}
}
