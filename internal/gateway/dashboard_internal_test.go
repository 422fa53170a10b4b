package gateway

import (
	"testing"
	"time"

	"github.com/pml-go/pml/internal/store"
)

// p50 and p95 are interpolated within their bucket and never exceed the
// slowest run the rollups kept: one run of 2.01 s is not a p95 of 5,000 ms,
// its bucket's bound (issue 30, item 8). Rows without a kept maximum fall
// back to the bound.
func TestDashboardPercentilesNeverExceedTheSlowest(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Minute)
	b := store.LatencyBucket(2010)
	row := store.DashboardMinute{Minute: now, Executions: 1}
	row.Latency[b], row.LatencyMaxMS[b] = 1, 2010
	d := buildDashboard(store.DashboardRows{Minutes: []store.DashboardMinute{row}}, "1h", now.Add(-time.Hour), now, time.Minute)
	if p := d.Totals.P95MS; p <= 2000 || p > 2010 || d.Totals.P50MS > p {
		t.Fatalf("totals %+v", d.Totals)
	}
	if p := d.Series[len(d.Series)-1].P95MS; p <= 2000 || p > 2010 {
		t.Fatalf("last step %+v", d.Series[len(d.Series)-1])
	}

	// Many fast runs and one slow: p95 stays with the fast ones' bucket.
	var many store.DashboardMinute
	many.Minute = now
	many.Latency[store.LatencyBucket(3)], many.LatencyMaxMS[store.LatencyBucket(3)] = 99, 4
	many.Latency[store.LatencyBucket(7000)], many.LatencyMaxMS[store.LatencyBucket(7000)] = 1, 7000
	var l latencyBuckets
	l.add(many)
	if p := l.percentile(0.95); p <= 2 || p > 4 {
		t.Fatalf("p95 %v", p)
	}
	if p := l.percentile(1); p != 7000 {
		t.Fatalf("p100 %v", p)
	}

	// Before the rollups kept maxima: the bucket's bound at most.
	row.LatencyMaxMS[b] = 0
	var old latencyBuckets
	old.add(row)
	if p := old.percentile(0.95); p <= 2000 || p > 5000 {
		t.Fatalf("p95 without a maximum %v", p)
	}
}
