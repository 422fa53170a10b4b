package tracing

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// limitedCollector takes POST bodies up to limit bytes and answers 413 to
// larger ones, as the gateway does; it keeps what it accepted.
type limitedCollector struct {
	limit int

	mu       sync.Mutex
	refused  int
	accepted []Trace
	bodies   []int
}

func (c *limitedCollector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, int64(c.limit)+1))
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(body) > c.limit {
		c.refused++
		http.Error(w, `{"error":"request_too_large"}`, http.StatusRequestEntityTooLarge)
		return
	}
	var in struct {
		Traces []Trace `json:"traces"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c.bodies = append(c.bodies, len(body))
	c.accepted = append(c.accepted, in.Traces...)
}

// A trace larger than a batch allows (queued by an older version) is sent
// cut, marked truncated; batches of several traces are split by size.
func TestSyncerBoundsAnOversizedQueuedTrace(t *testing.T) {
	c := &limitedCollector{limit: 1 << 20}
	srv := httptest.NewServer(c)
	defer srv.Close()
	q := mustOpen(t, t.TempDir(), 100)
	huge := bigTrace(3000, 1000) // ~6 MiB, as an unbounded trace was
	huge.TraceID = NewTraceID()
	mustPush(t, q, huge)
	var small []Trace
	for range 5 {
		tr := bigTrace(200, 800) // ~400 KiB each: two per batch at most
		tr.TraceID = NewTraceID()
		small = append(small, tr)
	}
	mustPush(t, q, small...)
	s := NewSyncer(q, HTTPPoster(srv.Client(), srv.URL, "k"), SyncOptions{MaxBatchBytes: (1 << 20) - 4<<10})
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if c.refused != 0 || len(c.accepted) != 6 || q.Len() != 0 || q.Dropped() != 0 {
		t.Fatalf("refused %d, accepted %d, queued %d, dropped %d", c.refused, len(c.accepted), q.Len(), q.Dropped())
	}
	got := c.accepted[0]
	if got.TraceID != huge.TraceID || got.Truncated == nil || got.Truncated.Spans != 3000 || got.Truncated.Bytes == 0 {
		t.Errorf("oversized trace arrived as %d tasks, truncation %+v", len(got.Tasks), got.Truncated)
	}
	if len(c.bodies) < 3 {
		t.Errorf("%d requests for 6 traces of ~400 KiB: batches not split by size", len(c.bodies))
	}
}

// A gateway that refuses a trace as too large (413) gets it again cut to
// half its size until it fits: the trace is truncated, never dropped. The
// next trace is delivered as usual.
func TestSyncerShrinksATraceRefusedAsTooLarge(t *testing.T) {
	c := &limitedCollector{limit: 40 << 10}
	srv := httptest.NewServer(c)
	defer srv.Close()
	q := mustOpen(t, t.TempDir(), 100)
	big := bigTrace(400, 300) // ~300 KiB
	big.TraceID = NewTraceID()
	next := trace(NewTraceID(), "")
	mustPush(t, q, big, next)
	s := NewSyncer(q, HTTPPoster(srv.Client(), srv.URL, "k"), SyncOptions{BatchSize: 1})
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(c.accepted) != 2 || q.Dropped() != 0 || q.Len() != 0 || c.refused == 0 {
		t.Fatalf("accepted %d, refused %d, dropped %d, queued %d", len(c.accepted), c.refused, q.Dropped(), q.Len())
	}
	got := c.accepted[0]
	if got.TraceID != big.TraceID || got.Truncated == nil || got.Truncated.Spans != 400 {
		t.Errorf("arrived as %d tasks, truncation %+v", len(got.Tasks), got.Truncated)
	}
	if c.accepted[1].TraceID != next.TraceID {
		t.Errorf("next trace = %s", c.accepted[1].TraceID)
	}
}

// A gateway that refuses even the bare trace: the trace is dropped and
// counted after Bound can cut nothing more, and the queue moves on.
func TestSyncerDropsATraceNothingCanShrink(t *testing.T) {
	c := &limitedCollector{limit: 64}
	srv := httptest.NewServer(c)
	defer srv.Close()
	q := mustOpen(t, t.TempDir(), 100)
	big := bigTrace(50, 300)
	big.TraceID = NewTraceID()
	mustPush(t, q, big)
	s := NewSyncer(q, HTTPPoster(srv.Client(), srv.URL, "k"), SyncOptions{})
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if q.Dropped() != 1 || q.Len() != 0 || c.refused < 3 {
		t.Errorf("dropped %d, queued %d after %d refusals", q.Dropped(), q.Len(), c.refused)
	}
}
