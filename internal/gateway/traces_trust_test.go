package gateway_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/gateway/traceapi"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/tracing"
)

// seriesCount is the number of series of the metric family name that
// /metrics serves, and the size of the whole answer.
func seriesCount(t testing.TB, g *gatewaytest.Gateway, name string) (series, bytes int) {
	t.Helper()
	resp, err := http.Get(g.MetricsURL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, name+"{") {
			series++
		}
	}
	return series, len(body)
}

// madeUpCode is a unique 250-byte error code, as the flood of issue 29 sent.
func madeUpCode(i int) string {
	s := fmt.Sprintf("FLOOD_%08d_", i)
	return s + strings.Repeat("X", 250-len(s))
}

// A member posting failed local runs with made-up error codes adds no
// metric series: every code outside the wire contract's is counted as
// UNKNOWN, the trace keeps the code it was sent with, the dashboard shows
// UNKNOWN, and the next request is served.
func TestPostedErrorCodesCannotGrowMetrics(t *testing.T) {
	g := gatewaytest.Start(t, gateway.Options{})
	before, _ := seriesCount(t, g, "pml_errors_total")
	now := time.Now()
	var first tracing.Trace
	for b := range 20 {
		batch := make([]tracing.Trace, 100)
		for i := range batch {
			tr := traceAt(now, -time.Duration(b*100+i)*time.Millisecond, "", false, "math:add")
			tr.ErrorCode = madeUpCode(b*100 + i)
			batch[i] = tr
		}
		if b == 0 {
			first = batch[0]
		}
		if stored, _ := postTraces(t, g.URL, g.Key, batch...); stored != len(batch) {
			t.Fatalf("batch %d: stored %d", b, stored)
		}
	}
	after, size := seriesCount(t, g, "pml_errors_total")
	if after > before+1 {
		t.Errorf("pml_errors_total: %d series before 2,000 made-up codes, %d after", before, after)
	}
	t.Logf("pml_errors_total series: %d before, %d after 2,000 made-up codes; /metrics %d bytes", before, after, size)

	if got := getTree(t, g.URL, g.Key, first.TraceID).Trace.ErrorCode; got != first.ErrorCode {
		t.Errorf("the stored trace's code is %q, want the one sent", got)
	}
	st, d, body := getDashboard(t, g, g.Key, "?range=1h")
	if st != http.StatusOK {
		t.Fatalf("dashboard: %d %s", st, body)
	}
	if len(d.ErrorsByCode) != 1 || d.ErrorsByCode[0].Code != "UNKNOWN" || d.ErrorsByCode[0].Count != 2000 {
		t.Errorf("errors by code: %+v", d.ErrorsByCode)
	}
	if l := listTraces(t, g.URL, g.Key, "?limit=1"); l.Total != 2000 {
		t.Errorf("the next request: total %d", l.Total)
	}
}

// A posted trace whose field is out of bounds is refused with a 400 naming
// the field; nothing of its batch is stored, and the next batch is.
func TestPostedTraceOutOfBounds(t *testing.T) {
	g := gatewaytest.Start(t, gateway.Options{})
	now := time.Now()
	for _, c := range []struct {
		name, field string
		edit        func(*tracing.Trace)
	}{
		{"future start", "started_at", func(tr *tracing.Trace) { tr.StartedAt = time.Date(2036, 1, 1, 0, 0, 0, 0, time.UTC) }},
		{"six minutes ahead", "started_at", func(tr *tracing.Trace) { tr.StartedAt = now.Add(6 * time.Minute) }},
		{"older than retention", "started_at", func(tr *tracing.Trace) { tr.StartedAt = now.Add(-31 * 24 * time.Hour) }},
		{"future task", "tasks[0].started_at", func(tr *tracing.Trace) { tr.Tasks[0].StartedAt = now.Add(time.Hour) }},
		{"tool with a space", "tasks[0].tool", func(tr *tracing.Trace) { tr.Tasks[0].Tool = "math add" }},
		{"tool id too long", "tasks[0].tool_id", func(tr *tracing.Trace) { tr.Tasks[0].ToolID = "a:" + strings.Repeat("b", 300) }},
		{"tools_used", "tools_used[0]", func(tr *tracing.Trace) { tr.ToolsUsed = []string{"<script>"} }},
		{"aggregate tool", "truncated.aggregates[0].tool", func(tr *tracing.Trace) {
			tr.Truncated = &tracing.Truncation{Aggregates: []tracing.ToolAggregate{{Tool: "a\nb", Calls: 1}}}
		}},
		{"task layer", "tasks[0].layer", func(tr *tracing.Trace) { tr.Tasks[0].Layer = -1 }},
		{"duration", "duration_ms", func(tr *tracing.Trace) { tr.DurationMS = 1e15 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			good := traceAt(now, 0, "", true, "math:add")
			bad := traceAt(now, 0, "", true, "math:add")
			c.edit(&bad)
			code, body := apiCall(t, http.MethodPost, g.URL+"/api/traces", g.Key, map[string]any{"traces": []tracing.Trace{good, bad}}, nil)
			if code != http.StatusBadRequest || !strings.Contains(string(body), `"invalid_traces"`) || !strings.Contains(string(body), c.field) {
				t.Fatalf("%d %s; want 400 naming %s", code, body, c.field)
			}
			if st, _ := apiCall(t, http.MethodGet, g.URL+"/api/traces/"+good.TraceID, g.Key, nil, nil); st != http.StatusNotFound {
				t.Errorf("the refused batch's good trace: %d", st)
			}
			if stored, _ := postTraces(t, g.URL, g.Key, good); stored != 1 {
				t.Errorf("the next batch stored %d", stored)
			}
		})
	}
}

// Issue 29's flood: a member posts 10,100 traces started in 2036. Every
// batch is refused, so the retention pass (newest 10,000 per tenant, by
// when the gateway received them) leaves every real trace, the next real
// trace is kept too, and no rollup of a future minute appears.
func TestFutureTracesCannotEraseRealOnes(t *testing.T) {
	g := gatewaytest.Start(t, gateway.Options{Retention: &traceapi.Retention{MaxCount: 10_000, Interval: 20 * time.Millisecond},
		TraceIngest: &traceapi.IngestLimits{}}) // the flood reaches validation
	now := time.Now()
	var real []tracing.Trace
	for i := range 50 {
		real = append(real, traceAt(now, -time.Duration(i)*time.Second, "real", true, "math:add"))
	}
	postTraces(t, g.URL, g.Key, real...)
	future := time.Date(2036, 1, 1, 0, 0, 0, 0, time.UTC)
	for b := range 101 {
		batch := make([]tracing.Trace, 100)
		for i := range batch {
			batch[i] = traceAt(future, time.Duration(b*100+i)*time.Second, "flood", false, "math:add")
		}
		code, body := apiCall(t, http.MethodPost, g.URL+"/api/traces", g.Key, map[string]any{"traces": batch}, nil)
		if code != http.StatusBadRequest || !strings.Contains(string(body), "started_at") {
			t.Fatalf("flood batch %d: %d %s", b, code, body)
		}
	}
	next := traceAt(time.Now(), 0, "real", true, "math:add")
	postTraces(t, g.URL, g.Key, next)
	waitTotal(t, g, g.Key, 51) // passes run every 20 ms; none deletes a real trace
	for _, tr := range append(real, next) {
		if st, _ := apiCall(t, http.MethodGet, g.URL+"/api/traces/"+tr.TraceID, g.Key, nil, nil); st != http.StatusOK {
			t.Fatalf("real trace %s: %d", tr.TraceID, st)
		}
	}
	st, d, body := getDashboard(t, g, g.Key, "?range=7d")
	if st != http.StatusOK {
		t.Fatalf("dashboard: %d %s", st, body)
	}
	if d.Totals.Executions != 51 || d.Totals.Errors != 0 {
		t.Errorf("dashboard totals %+v; want the 51 real runs", d.Totals)
	}
	for _, p := range d.Series {
		if p.Time > time.Now().Add(store.MaxClockSkew).Unix() {
			t.Errorf("a dashboard point in the future: %+v", p)
		}
	}
}

// A member flooding POST /api/traces is refused with 429 and Retry-After
// once its project's traces per minute are spent, stores nothing of the
// refused batch, and another project posts and lists as before.
func TestTraceIngestLimitPerTenant(t *testing.T) {
	g := gatewaytest.Start(t, gateway.Options{TraceIngest: &traceapi.IngestLimits{TracesPerMinute: 250}})
	other := g.NewKey(t, store.Scope{Org: "initech", Project: "x"})
	now := time.Now()
	batch := func() []tracing.Trace {
		out := make([]tracing.Trace, 100)
		for i := range out {
			out[i] = traceAt(now, -time.Duration(i)*time.Millisecond, "flood", true, "math:add")
		}
		return out
	}
	postTraces(t, g.URL, g.Key, batch()...)
	postTraces(t, g.URL, g.Key, batch()...)
	resp, body := gatewaytest.Do(t, http.MethodPost, g.URL+"/api/traces", g.Key, strings.NewReader(mustJSON(t, map[string]any{"traces": batch()})), nil)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(body), `"rate_limited"`) {
		t.Fatalf("third batch: %d Retry-After %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	if l := listTraces(t, g.URL, g.Key, "?limit=1"); l.Total != 200 {
		t.Errorf("%d traces stored, want the first two batches'", l.Total)
	}
	if stored, _ := postTraces(t, g.URL, other, batch()...); stored != 100 {
		t.Errorf("another tenant stored %d", stored)
	}
	if l := listTraces(t, g.URL, other, "?limit=1"); l.Total != 100 {
		t.Errorf("another tenant lists %d", l.Total)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The dashboard's tables list 20 entries and an "other" row summing the
// rest.
func TestDashboardTablesTopTwenty(t *testing.T) {
	g := gatewaytest.Start(t, gateway.Options{})
	now := time.Now()
	var traces []tracing.Trace
	for i := range 30 {
		tools := make([]string, i+1)
		for k := range tools {
			tools[k] = fmt.Sprintf("ns:tool%02d", i)
		}
		tr := traceAt(now, -time.Duration(i)*time.Second, "", false, tools...)
		tr.Tasks[0].Success = false
		traces = append(traces, tr)
	}
	postTraces(t, g.URL, g.Key, traces...)
	st, d, body := getDashboard(t, g, g.Key, "?range=1h")
	if st != http.StatusOK {
		t.Fatalf("dashboard: %d %s", st, body)
	}
	for name, list := range map[string][]gateway.DashboardTool{"slowest": d.SlowestTools, "failing": d.FailingTools} {
		if len(list) != 21 {
			t.Fatalf("%s: %d rows", name, len(list))
		}
		other := list[20]
		if other.Tool != "other" || other.Others != 10 {
			t.Errorf("%s: last row %+v", name, other)
		}
		var calls int64
		for _, r := range list {
			calls += r.Calls
		}
		if calls != 30*31/2 {
			t.Errorf("%s: %d calls over the rows, want %d", name, calls, 30*31/2)
		}
	}
	if len(d.ErrorsByCode) != 1 || d.ErrorsByCode[0].Code != "TOOL_ERROR" {
		t.Errorf("errors by code %+v", d.ErrorsByCode)
	}
}
