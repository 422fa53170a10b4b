package web_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/pml-go/pml/internal/analysis"
	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/tracing"
)

// dagCode loops five times over two calls, writes then reads one file and
// branches on what it read.
const dagCode = `for (const f of ["a", "b", "c", "d", "e"]) {
  const r = await mcp.fs.read_file({ path: f });
  await mcp.crypto.sha256({ data: r });
}
await mcp.fs.write_file({ path: "out.txt", content: "x" });
const back = await mcp.fs.read_file({ path: "out.txt" });
if (back.ok) { await mcp.json.parse({ data: back }) } else { await mcp.math.add({ a: 1, b: 2 }) }`

// dagTrace is the trace of dagCode as a package records it: the analysed
// DAG and one task per call.
func dagTrace(t *testing.T) tracing.Trace {
	t.Helper()
	an, err := analysis.Analyze(dagCode)
	if err != nil {
		t.Fatal(err)
	}
	dag, _ := json.Marshal(an.WireDAG())
	start := time.Now().Add(-time.Minute)
	tr := tracing.Trace{TraceID: tracing.NewTraceID(), WorkflowID: "wf", ExecutedLocally: true, Success: true,
		DurationMS: 20, StartedAt: start, Decisions: []tracing.Decision{}, Code: dagCode, DAG: dag,
		ToolsUsed: []string{"fs:read_file", "crypto:sha256", "fs:write_file", "json:parse", "math:add"}}
	var tools []string
	for range 5 {
		tools = append(tools, "fs:read_file", "crypto:sha256")
	}
	tools = append(tools, "fs:write_file", "fs:read_file", "json:parse")
	for i, tool := range tools {
		tr.Tasks = append(tr.Tasks, tracing.Task{TaskID: "t" + strconv.Itoa(i+1), Tool: tool, ToolID: tool, Routing: "client",
			Args: json.RawMessage(`{}`), Result: json.RawMessage(`{"ok":true}`), Success: true, DurationMS: 1,
			StartedAt: start.Add(time.Duration(i) * time.Millisecond)})
	}
	return tr
}

// The DAG of a run with a loop, a write then a read of one file and an if:
// the loop's two sites are one node each labelled ×5 with one edge between
// them (not 25), the read follows the write by an ordering edge, and the if
// is a decision node with an edge to each branch.
func TestBrowserDAGLoopOrderAndDecision(t *testing.T) {
	exe := chromium(t)
	g := gatewaytest.Start(t, gateway.Options{})
	tr := dagTrace(t)
	postTrace(t, g, tr)

	b := startBrowser(t, exe)
	row := `#traces tbody tr[data-trace-id="` + tr.TraceID + `"]`
	b.do("log in", chromedp.Navigate(g.URL+"/"), chromedp.WaitVisible(`#key`),
		chromedp.SendKeys(`#key`, g.Key), chromedp.Click(`#save-key`), chromedp.WaitVisible(row))
	b.open("open the execution", row, `#dag svg g.decision`)

	// Sites: t1 read_file and t2 sha256 in the loop, t3 write_file, t4
	// read_file, t5 json:parse (ran), t6 math:add (not run); one decision.
	if n := b.count(`#dag svg g.node`); n != 5 {
		t.Errorf("%d call nodes, want 5 (one per site that ran)", n)
	}
	if n := b.count(`#dag svg g.planned`); n != 1 {
		t.Errorf("%d planned nodes, want 1 (the branch not taken)", n)
	}
	// SVG elements have no innerText: read their textContent.
	svgText := func(sel string) string {
		s, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`(document.querySelector(`+strconv.Quote(sel)+`) || {}).textContent || ""`))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return s
	}
	for _, site := range []string{"t1", "t2"} {
		if s := svgText(`#dag g.node[data-site="` + site + `"] text.count`); s != "×5" {
			t.Errorf("loop site %s is labelled %q, want ×5", site, s)
		}
	}
	if n := b.count(`#dag g.node[data-site="t4"] text.count`); n != 0 {
		t.Errorf("the read after the loop is counted as a loop site")
	}
	if n := b.count(`#dag path.edge.data[data-from="t1"][data-to="t2"]`); n != 1 {
		t.Errorf("%d edges read_file → sha256, want 1", n)
	}
	if n := b.count(`#dag path.edge.order[data-from="t3"][data-to="t4"]`); n != 1 {
		t.Errorf("%d ordering edges write_file → read_file, want 1", n)
	}
	if n := b.count(`#dag path.edge.data`); n != 2 {
		t.Errorf("%d data edges, want 2 (read → sha256, read → the decision)", n)
	}
	if n := b.count(`#dag path.edge.data[data-from="t4"][data-to="d1"]`); n != 1 {
		t.Errorf("the decision does not depend on the read it tests")
	}
	if n := b.count(`#dag path.edge.branch[data-from="d1"]`); n != 2 {
		t.Errorf("%d branch edges from the decision, want 2", n)
	}
	if n := b.count(`#dag path.edge:not(.then)`); n != 5 {
		t.Errorf("%d edges of the plan, want 5", n)
	}
	// The write ran after the loop, with nothing read between them.
	if n := b.count(`#dag path.edge.then`); n != 1 || b.count(`#dag path.edge.then[data-from="t2"][data-to="t3"]`) != 1 {
		t.Errorf("%d then edges, want 1: the loop's last site → the write", n)
	}
	if s := svgText(`#dag g.decision`); !strings.Contains(s, "if") || !strings.Contains(s, "back.ok") {
		t.Errorf("decision node says %q", s)
	}
	// A loop site opens one of its calls.
	b.do("open the loop site", chromedp.Click(`#dag g.node[data-site="t2"]`), chromedp.WaitVisible(`#task pre`))
	if s := b.text(`#task h3`); !strings.Contains(s, "crypto:sha256") {
		t.Errorf("task panel: %q", s)
	}
}

// orderCode awaits two calls one after the other with no data between them,
// then two at once.
const orderCode = `await mcp.crypto.sha256({ data: "a" });
await mcp.crypto.sha256({ data: "b" });
await Promise.all([mcp.math.add({ a: 1, b: 2 }), mcp.math.add({ a: 3, b: 4 })]);`

// Sequential awaits are drawn in order (columns, and dotted "then" edges),
// unlike calls that ran at once, which share a column; the DAG used to draw
// all four in one column, as if they had all run in parallel.
func TestBrowserDAGShowsOrder(t *testing.T) {
	exe := chromium(t)
	g := gatewaytest.Start(t, gateway.Options{})
	an, err := analysis.Analyze(orderCode)
	if err != nil {
		t.Fatal(err)
	}
	dag, _ := json.Marshal(an.WireDAG())
	start := time.Now().Add(-time.Minute)
	tr := tracing.Trace{TraceID: tracing.NewTraceID(), WorkflowID: "wf", Success: true, DurationMS: 5, StartedAt: start,
		Decisions: []tracing.Decision{}, Code: orderCode, DAG: dag, ToolsUsed: []string{"crypto:sha256", "math:add"}}
	// Sub-millisecond calls, as std tools take: the order lies below what
	// a millisecond clock tells apart.
	for i, c := range []struct {
		tool     string
		startUS  int
		duration float64
	}{{"crypto:sha256", 0, 0.1}, {"crypto:sha256", 150, 0.1}, {"math:add", 300, 0.2}, {"math:add", 310, 0.2}} {
		tr.Tasks = append(tr.Tasks, tracing.Task{TaskID: "c" + strconv.Itoa(i+1), Tool: c.tool, ToolID: c.tool, Routing: "server",
			Args: json.RawMessage(`{}`), Result: json.RawMessage(`1`), Success: true, DurationMS: c.duration,
			StartedAt: start.Add(time.Duration(c.startUS) * time.Microsecond)})
	}
	postTrace(t, g, tr)

	b := startBrowser(t, exe)
	row := `#traces tbody tr[data-trace-id="` + tr.TraceID + `"]`
	b.do("log in", chromedp.Navigate(g.URL+"/"), chromedp.WaitVisible(`#key`),
		chromedp.SendKeys(`#key`, g.Key), chromedp.Click(`#save-key`), chromedp.WaitVisible(row))
	b.open("open the execution", row, `#dag svg g.node`)
	if n := b.count(`#dag svg g.node`); n != 4 {
		t.Fatalf("%d nodes, want 4", n)
	}
	column := func(site string) float64 {
		x, err := chromedp.Run(b.ctx, chromedp.Evaluate[float64](`document.querySelector('#dag g.node[data-site="`+site+`"]').transform.baseVal.consolidate().matrix.e`))
		if err != nil {
			t.Fatalf("x of %s: %v", site, err)
		}
		return x
	}
	if x1, x2, x3, x4 := column("t1"), column("t2"), column("t3"), column("t4"); !(x1 < x2 && x2 < x3 && x3 == x4) {
		t.Errorf("columns %v %v %v %v: want the two awaits in order, then the two parallel calls in one column", x1, x2, x3, x4)
	}
	for _, e := range [][2]string{{"t1", "t2"}, {"t2", "t3"}, {"t2", "t4"}} {
		if n := b.count(`#dag path.edge.then[data-from="` + e[0] + `"][data-to="` + e[1] + `"]`); n != 1 {
			t.Errorf("%d then edges %s → %s, want 1", n, e[0], e[1])
		}
	}
	if n := b.count(`#dag path.edge.then`); n != 3 {
		t.Errorf("%d then edges, want 3 (none between the parallel calls)", n)
	}
	if n := b.count(`#dag path.edge.data`); n != 0 {
		t.Errorf("%d data edges, want none: no call reads another's result", n)
	}
}
