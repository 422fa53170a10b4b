package web_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/tracing"
	"github.com/pml-go/pml/internal/wire"
)

// Bounds the page promises (app.js), checked from outside.
const (
	pageTreeRows = 1200
	pageDAGNodes = 100
	// pageMaxElements bounds the whole document with the largest trace open.
	pageMaxElements = 20_000
)

// The largest trace the gateway keeps (the span cap, near the byte cap)
// opens in under 2 s and builds a bounded DOM: the kept calls as rows, one
// row for the calls aggregated, the first calls in the DAG.
func TestBrowserLargestTrace(t *testing.T) {
	exe := chromium(t)
	g := gatewaytest.Start(t, gateway.Options{})
	in := largestTrace(t)
	postTrace(t, g, in)
	tr := storedTrace(t, g, in.TraceID)
	kept := tracing.DefaultHeadSpans + tracing.DefaultTailSpans
	if len(tr.Tasks) != kept || tr.Truncated == nil || tr.Truncated.SpansAggregated != 3000-kept {
		t.Fatalf("stored trace: %d tasks, truncation %+v", len(tr.Tasks), tr.Truncated)
	}
	size := traceBytes(t, g, in.TraceID)
	if size > tracing.MaxTraceBytes || size < tracing.MaxTraceBytes*9/10 {
		t.Fatalf("stored trace is %d bytes: not the largest kind (cap %d)", size, tracing.MaxTraceBytes)
	}
	a := wire.Answer{TraceID: in.TraceID}

	b := startBrowser(t, exe)
	row := `#traces tbody tr[data-trace-id="` + a.TraceID + `"]`
	b.do("log in", chromedp.Navigate(g.URL+"/"), chromedp.WaitVisible(`#key`),
		chromedp.SendKeys(`#key`, g.Key), chromedp.Click(`#save-key`), chromedp.WaitVisible(row))
	// Fetching and drawing, timed by the page's own clock.
	start := time.Now()
	took, err := chromedp.Run(b.ctx, chromedp.Evaluate[float64](`(async () => {
		const t0 = performance.now();
		await openTrace(`+strconv.Quote(a.TraceID)+`);
		return performance.now() - t0;
	})()`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("open the trace: %v", err)
	}
	t.Logf("opened a %d-byte trace of %d calls in %.0f ms (page clock), %v in all", size, tr.Truncated.Spans, took, time.Since(start))
	if took > 2000 {
		t.Errorf("opening the largest trace took %.0f ms, want under 2 s", took)
	}
	rows, aggregates := b.count(`#tree .task-row`), b.count(`#tree .aggregate-row`)
	if rows != kept || rows > pageTreeRows || aggregates != 1 {
		t.Errorf("tree: %d task rows (want %d, at most %d), %d aggregate rows (want 1)", rows, kept, pageTreeRows, aggregates)
	}
	// The aggregate row sits between the head and the tail.
	order, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#tree .tree-row")]
		.map((r) => r.classList.contains("aggregate-row") ? "gap" : (r.dataset.task || "").split("/")[1] || "trace")`))
	if err != nil {
		t.Fatal(err)
	}
	if gap := indexOf(order, "gap"); gap != 1+tracing.DefaultHeadSpans || order[gap-1] != "t1000" || order[gap+1] != "t2951" {
		t.Errorf("aggregate row at %d of %d rows (around %v)", gap, len(order), order[max(gap-1, 0):min(gap+2, len(order))])
	}
	if txt := b.text(`#tree .aggregate-row`); !strings.Contains(txt, "1,950 more spans aggregated") || !strings.Contains(txt, "json:parse ×1,950") {
		t.Errorf("aggregate row says %q", txt)
	}
	if n := b.count(`#dag svg g.node`); n > pageDAGNodes || n == 0 {
		t.Errorf("DAG has %d nodes, at most %d", n, pageDAGNodes)
	}
	if !strings.Contains(b.text(`#dag .dag-more`), "2,900 more") {
		t.Errorf("DAG note: %q", b.text(`#dag .dag-more`))
	}
	if s := b.text(`#summary`); !strings.Contains(s, "3,000 calls: 1,050 kept, 1,950 aggregated") {
		t.Errorf("summary does not say the trace is bounded: %q", s)
	}
	if n := b.count(`*`); n > pageMaxElements {
		t.Errorf("document has %d elements, want at most %d", n, pageMaxElements)
	}
	// A task of the tail opens like any other.
	b.do("open a tail task", chromedp.Click(`#tree .task-row[data-task$="/t3000"]`), chromedp.WaitVisible(`#task pre`))
	if s := b.text(`#task h3`); !strings.Contains(s, "t3000") {
		t.Errorf("task panel: %q", s)
	}
	// The view around the aggregate row, for a person to look at.
	b.do("scroll to the aggregate", chromedp.ScrollIntoView(`#tree .aggregate-row`))
	shot, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	path := filepath.Join(artifactDir(t), "largest-trace.png")
	if err := os.WriteFile(path, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

// largestTrace is a package's trace of 3,000 json:parse calls as its
// recorder bounds it (the first 1,000 and the last 50 kept), with payloads
// that bring it just under the byte cap.
func largestTrace(t *testing.T) tracing.Trace {
	t.Helper()
	start := time.Now().Add(-time.Minute)
	build := func(pad int) tracing.Trace {
		tr := tracing.Trace{TraceID: tracing.NewTraceID(), WorkflowID: "wf", ExecutedLocally: true, Success: true,
			DurationMS: 3000, StartedAt: start, Decisions: []tracing.Decision{}, ToolsUsed: []string{"json:parse"},
			Code: "for (let i = 0; i < 3000; i++) await mcp.json.parse({ data })",
			Truncated: &tracing.Truncation{Spans: 3000, SpansAggregated: 1950, HeadSpans: 1000,
				Aggregates: []tracing.ToolAggregate{{Tool: "json:parse", Calls: 1950, TotalMS: 1950, MinMS: 0.5, MaxMS: 2}}}}
		for _, i := range append(seq(0, 1000), seq(2950, 3000)...) {
			arg, _ := json.Marshal(map[string]any{"data": strings.Repeat("p", pad), "i": i})
			tr.Tasks = append(tr.Tasks, tracing.Task{TaskID: "t" + strconv.Itoa(i+1), Tool: "json:parse", ToolID: "json:parse",
				Routing: "client", Args: arg, Result: json.RawMessage(`{"i":` + strconv.Itoa(i) + `}`), Success: true,
				DurationMS: 1, StartedAt: start.Add(time.Duration(i) * time.Millisecond)})
		}
		return tr
	}
	base, err := json.Marshal(build(0))
	if err != nil {
		t.Fatal(err)
	}
	pad := (tracing.MaxTraceBytes - 4<<10 - len(base)) / 1050
	return build(pad)
}

func seq(from, to int) []int {
	var out []int
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

func postTrace(t *testing.T, g *gatewaytest.Gateway, tr tracing.Trace) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"traces": []tracing.Trace{tr}})
	req, _ := http.NewRequest(http.MethodPost, g.URL+"/api/traces", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+g.Key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /api/traces: HTTP %d", resp.StatusCode)
	}
}

func indexOf(list []string, v string) int {
	for i, x := range list {
		if x == v {
			return i
		}
	}
	return -1
}

// traceBytes is the size of a stored trace's JSON.
func traceBytes(t *testing.T, g *gatewaytest.Gateway, id string) int {
	t.Helper()
	row, err := g.Service.Store().TraceByID(t.Context(), store.Scope{Org: "acme", Project: "web"}, id)
	if err != nil {
		t.Fatal(err)
	}
	return len(row.Body)
}
