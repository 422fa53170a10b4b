package web_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/wire"
)

// The dashboard draws a project's real executions: their count, errors by
// code, latency, tools and capabilities, in charts and tables.
func TestBrowserDashboard(t *testing.T) {
	exe := chromium(t)
	g := gatewaytest.Start(t, gateway.Options{})
	s := g.Connect(t, g.Key, false)
	learn := gatewaytest.Execute(t, s, wire.ExecuteRequest{Code: "const s = await mcp.math.add({a: 1, b: 2}); return await mcp.math.add({a: s, b: 3})", Intent: "add three numbers"})
	if learn.Status != wire.StatusSuccess || learn.Capability == nil {
		t.Fatalf("learning: %+v", learn)
	}
	_, action, _ := strings.Cut(learn.Capability.Name, ":")
	ok, failed := 1, 0
	for range 3 {
		if a := gatewaytest.Execute(t, s, wire.ExecuteRequest{Code: "return await mcp.cap." + action + "({})"}); a.Status != wire.StatusSuccess {
			t.Fatalf("calling the capability: %+v", a)
		}
		ok++
	}
	for range 2 {
		if a := gatewaytest.Execute(t, s, wire.ExecuteRequest{Code: `return await mcp.json.parse({data: "{not json"})`}); a.Status != wire.StatusError {
			t.Fatalf("a failing run: %+v", a)
		}
		failed++
	}
	total := ok + failed

	b := startBrowser(t, exe)
	b.do("log in", chromedp.Navigate(g.URL+"/"), chromedp.WaitVisible(`#key`),
		chromedp.SendKeys(`#key`, g.Key), chromedp.Click(`#save-key`), chromedp.WaitVisible(`#traces tbody tr[data-trace-id]`))
	b.do("open the dashboard", chromedp.Click(`#nav a`), chromedp.WaitVisible(`body[data-loaded="1h"]`),
		chromedp.WaitVisible(`#chart-rate canvas`))
	if got := b.text(`#totals dd[data-k="executions"]`); got != strconv.Itoa(total) {
		t.Errorf("executions %q, want %d", got, total)
	}
	if got := b.text(`#totals dd[data-k="error_rate"]`); !strings.HasPrefix(got, strconv.FormatFloat(float64(failed)*100/float64(total), 'f', 1, 64)) {
		t.Errorf("error rate %q", got)
	}
	for _, chart := range []string{"#chart-rate", "#chart-errors", "#chart-latency"} {
		if n := b.count(chart + ` canvas`); n == 0 {
			t.Errorf("%s draws nothing", chart)
		}
	}
	total2, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.querySelector("#chart-rate").dataset.total`))
	if err != nil || total2 != strconv.Itoa(total) {
		t.Errorf("the rate chart's executions sum to %q, want %d (%v)", total2, total, err)
	}
	if got := b.text(`#errors tbody`); !strings.Contains(got, "2") || strings.Contains(got, "None") {
		t.Errorf("errors by code: %q", got)
	}
	if got := b.text(`#slowest tbody`); !strings.Contains(got, "math:add") || !strings.Contains(got, "json:parse") {
		t.Errorf("slowest tools: %q", got)
	}
	if got := b.text(`#failing tbody`); !strings.Contains(got, "json:parse") || strings.Contains(got, "math:add") {
		t.Errorf("failing tools: %q", got)
	}
	// Its uses: the run that made it and its 3 calls (docs/protocol.md).
	if got := b.text(`#capabilities tbody`); !strings.Contains(got, learn.Capability.Name) || !strings.Contains(got, "4") {
		t.Errorf("capabilities: %q, want %s used 4 times", got, learn.Capability.Name)
	}
	if got := b.text(`#admission dd[data-k="running"]`); got != "0" {
		t.Errorf("running now: %q", got)
	}
	// At a desktop's width and a phone's, every card's label sits above its
	// figure, each on one line, and nothing overflows the page sideways
	// (issue 30, item 8).
	// Figures grow with load and time: a row as wide as a busy gateway's
	// must not widen the page either.
	if _, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](`(() => {
		const r = document.querySelector("#slowest tbody").insertRow();
		for (const t of ["filesystem:read_multiple_files", "12,345", "1,234,567.89", "9,876,543.21"]) r.insertCell().textContent = t;
		return true;
	})()`)); err != nil {
		t.Fatalf("adding a busy row: %v", err)
	}
	for _, width := range []int64{1280, 390} {
		// The charts follow the window on its resize event, after the
		// viewport changes: wait for the page to fit, then look.
		b.do("width "+strconv.FormatInt(width, 10), chromedp.EmulateViewport(width, 900), chromedp.WaitVisible(`#admission dd[data-k="queued"]`))
		_, _ = chromedp.Run(b.ctx, chromedp.Poll[bool](`document.documentElement.scrollWidth <= innerWidth`, chromedp.WithPollingTimeout(5*time.Second)))
		bad, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]string](`(() => {
			const bad = [];
			const lines = (n) => { const r = document.createRange(); r.selectNodeContents(n); return new Set([...r.getClientRects()].map((c) => Math.round(c.top))).size; };
			for (const dd of document.querySelectorAll(".cards dd")) {
				const dt = dd.previousElementSibling, a = dt.getBoundingClientRect(), b = dd.getBoundingClientRect();
				if (Math.abs(a.left - b.left) > 1 || b.top < a.bottom - 1 || b.top - a.bottom > 8 || lines(dt) !== 1 || lines(dd) !== 1) bad.push(dt.textContent + " / " + dd.textContent);
			}
			if (document.documentElement.scrollWidth > innerWidth) bad.push("page " + document.documentElement.scrollWidth + " px wide in " + innerWidth + ": " + [...document.querySelectorAll("body *")].filter((n) => n.getBoundingClientRect().right > innerWidth).slice(0, 6).map((n) => n.tagName + "#" + n.id + "." + n.className + " " + Math.round(n.getBoundingClientRect().right)).join(", "));
			return bad;
		})()`))
		if err != nil || len(bad) > 0 {
			t.Errorf("at %d px: cards apart or wrapped %q (%v)", width, bad, err)
		}
	}
	b.do("desktop again", chromedp.EmulateViewport(1280, 900))
	b.do("the week", chromedp.Click(`#ranges button[data-range="7d"]`), chromedp.WaitVisible(`#ranges button.on[data-range="7d"]`))
	b.do("reloaded", chromedp.WaitVisible(`body[data-loaded="7d"]`))
	if got := b.text(`#totals dd[data-k="executions"]`); got != strconv.Itoa(total) {
		t.Errorf("7d executions %q, want %d", got, total)
	}
	for _, u := range b.requested() {
		if !strings.HasPrefix(u, g.URL+"/") && !strings.HasPrefix(u, "data:") {
			t.Errorf("the page requested another origin: %s", u)
		}
	}
}
