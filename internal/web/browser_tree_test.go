package web_test

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/tracing"
)

// The trace tree's bars nest inside their parents' (issue 41: a call drawn
// at 1.0–1.1 ms after its execution's end at 0.55 ms). The execution starts
// 0.9 ms into a millisecond, which Date.parse drops, and lasts 0.55 ms; its
// first call runs 0.1 ms inside it, its second, stamped by another clock,
// ends 0.15 ms past it: both bars lie within the execution's.
func TestBrowserTreeBarsNest(t *testing.T) {
	exe := chromium(t)
	g := gatewaytest.Start(t, gateway.Options{})
	start := time.Now().Add(-time.Minute).Truncate(time.Millisecond).Add(900 * time.Microsecond)
	tr := tracing.Trace{TraceID: tracing.NewTraceID(), WorkflowID: "wf", ExecutedLocally: true, Success: true,
		DurationMS: 0.55, StartedAt: start, Decisions: []tracing.Decision{}, ToolsUsed: []string{"json:parse"},
		Code: "await mcp.json.parse({ data }); await mcp.json.parse({ data })"}
	for i, at := range []struct {
		offset time.Duration
		ms     float64
	}{{100 * time.Microsecond, 0.1}, {500 * time.Microsecond, 0.2}} {
		tr.Tasks = append(tr.Tasks, tracing.Task{TaskID: "t" + strconv.Itoa(i+1), Tool: "json:parse", ToolID: "json:parse",
			Routing: "client", Args: json.RawMessage(`{"data":"1"}`), Result: json.RawMessage(`1`), Success: true,
			DurationMS: at.ms, StartedAt: start.Add(at.offset)})
	}
	postTrace(t, g, tr)

	b := startBrowser(t, exe)
	row := `#traces tbody tr[data-trace-id="` + tr.TraceID + `"]`
	b.do("log in", chromedp.Navigate(g.URL+"/"), chromedp.WaitVisible(`#key`),
		chromedp.SendKeys(`#key`, g.Key), chromedp.Click(`#save-key`), chromedp.WaitVisible(row))
	b.do("open the execution", chromedp.Click(row), chromedp.WaitVisible(`#tree .task-row .bar`))
	type box struct{ Left, Right float64 }
	bars, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]box](`[...document.querySelectorAll("#tree .trace-row .bar, #tree .task-row .bar")].map((b) => {
		const r = b.getBoundingClientRect();
		return { Left: r.left, Right: r.right };
	})`))
	if err != nil {
		t.Fatal(err)
	}
	if len(bars) != 3 {
		t.Fatalf("%d bars, want the execution's and its 2 calls'", len(bars))
	}
	exec := bars[0]
	for i, c := range bars[1:] {
		// Half a pixel for rounding.
		if c.Left < exec.Left-0.5 || c.Right > exec.Right+0.5 {
			t.Errorf("call %d's bar %+v outside its execution's %+v", i+1, c, exec)
		}
	}
	// The first call sits in the execution's first half, where it ran (it
	// was drawn 0.1 ms after the execution's end before).
	if first := bars[1]; first.Left > (exec.Left+exec.Right)/2 {
		t.Errorf("the first call's bar %+v is not where it ran in %+v", first, exec)
	}
}
