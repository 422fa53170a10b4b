package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/gatewayclient"
	"github.com/pml-go/pml/internal/tracing"
	"github.com/pml-go/pml/internal/wire"
	"github.com/pml-go/pml/internal/workspace"
)

const chromiumPath = "/usr/bin/chromium"

// chromium returns the browser to drive, skipping the test when it is not
// installed unless PML_REQUIRE_BROWSER=1 (CI) makes that a failure.
func chromium(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv("PML_REQUIRE_BROWSER") == "1" {
			t.Fatalf("PML_REQUIRE_BROWSER=1 but %s is missing: %v", chromiumPath, err)
		}
		t.Skipf("%s not installed (apt-get install chromium)", chromiumPath)
	}
	return chromiumPath
}

// artifactDir is where the screenshot goes: $PML_TEST_ARTIFACTS, else a
// temp dir that outlives the test so the file can be looked at.
func artifactDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("PML_TEST_ARTIFACTS")
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "pml-test-artifacts-"); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// mixedRun is a local run through a real package: a client tool, a server
// tool and a client call that fails (caught), synced to the gateway.
func mixedRun(t *testing.T, g *gatewaytest.Gateway) wire.Answer {
	t.Helper()
	ws := t.TempDir()
	for name, content := range map[string]string{
		".pml.json": `{"version": "1", "permissions": {"allow": ["*"]}}`,
		"notes.txt": "meeting notes; contact carol@example.com",
	} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	p, err := workspace.New(workspace.Options{Workspace: ws, Gateway: gatewayclient.NewRemote(g.URL, g.Key, filepath.Join(ws, ".pml"))})
	if err != nil {
		t.Fatal(err)
	}
	a := p.Execute(context.Background(), wire.ExecuteRequest{Code: `
		const txt = await mcp.filesystem.read_file({ path: "notes.txt" });
		const h = await mcp.crypto.sha256({ data: txt });
		let missing = null;
		try { await mcp.filesystem.read_file({ path: "missing.txt" }); } catch (e) { missing = e.message; }
		return { h, missing };`})
	if a.Status != wire.StatusSuccess || a.ExecutedLocally == nil || !*a.ExecutedLocally {
		t.Fatalf("local run: %+v", a)
	}
	if err := p.Close(); err != nil { // flushes the trace to the gateway
		t.Fatal(err)
	}
	return a
}

func storedTrace(t *testing.T, g *gatewaytest.Gateway, id string) tracing.Trace {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, g.URL+"/api/traces/"+id, nil)
	req.Header.Set("Authorization", "Bearer "+g.Key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var node struct {
		Trace tracing.Trace `json:"trace"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&node) != nil {
		t.Fatalf("trace %s: HTTP %d", id, resp.StatusCode)
	}
	return node.Trace
}

// The page, in real headless Chromium: it lists the executions, opens one,
// draws one DAG node per task in the right colours with the failure marked,
// shows sanitized arguments, filters, and never requests another origin.
func TestBrowserExecutionPage(t *testing.T) {
	exe := chromium(t)
	g := gatewaytest.Start(t, gateway.Options{})
	s := g.Connect(t, g.Key, true)
	for _, code := range []string{
		`const a = await mcp.json.parse({ data: '{"n": 2}' }); return await mcp.math.add({ a: a.n, b: 40 });`,
		`return await mcp.crypto.sha256({ data: "x" })`,
		`throw new Error("deliberate")`,
	} {
		gatewaytest.Execute(t, s, wire.ExecuteRequest{Code: code})
	}
	local := mixedRun(t, g)
	want := storedTrace(t, g, local.TraceID)
	if len(want.Tasks) != 3 {
		t.Fatalf("local trace has %d tasks, want 3", len(want.Tasks))
	}

	b := startBrowser(t, exe)
	ctx, do, count, text := b.ctx, b.do, b.count, b.text

	row := `#traces tbody tr[data-trace-id="` + local.TraceID + `"]`
	do("log in", chromedp.Navigate(g.URL+"/"), chromedp.WaitVisible(`#key`),
		chromedp.SendKeys(`#key`, g.Key), chromedp.Click(`#save-key`), chromedp.WaitVisible(row))
	if n := count(`#traces tbody tr[data-trace-id]`); n != 4 {
		t.Errorf("%d executions listed, want 4", n)
	}
	b.open("open the local execution", row, `#dag svg g.node`)
	if n := count(`#dag svg g.node`); n != len(want.Tasks) {
		t.Errorf("DAG has %d nodes, want one per task (%d)", n, len(want.Tasks))
	}
	client, server, failed := count(`#dag svg g.node.client`), count(`#dag svg g.node.server`), count(`#dag svg g.node.failed`)
	if client != 2 || server != 1 || failed != 1 {
		t.Errorf("nodes: %d client, %d server, %d failed; want 2, 1, 1", client, server, failed)
	}
	if n := count(`#tree .task-row .bar`); n != len(want.Tasks) {
		t.Errorf("trace tree has %d timing bars for tasks, want %d", n, len(want.Tasks))
	}
	// The summary names the tools the run called; all its planned ones ran
	// (issue 30, item 6).
	if s := text(`#summary`); !strings.Contains(s, "Tools called") || !strings.Contains(s, "filesystem:read_file") || strings.Contains(s, "Planned, not called") {
		t.Errorf("summary: %q", s)
	}
	do("open a task", chromedp.Click(`#dag svg g.node.client`), chromedp.WaitVisible(`#task pre`))
	if s := text(`#task`); !strings.Contains(s, "Arguments (sanitized)") || !strings.Contains(s, "[EMAIL]") || strings.Contains(s, "carol@example.com") {
		t.Errorf("task panel does not show the sanitized result: %q", s)
	}
	do("catalog", chromedp.WaitVisible(`#catalog > *`))
	if s := text(`#catalog`); strings.TrimSpace(s) == "" {
		t.Error("catalog section is empty")
	}
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	path := filepath.Join(artifactDir(t), "trace-page.png")
	if err := os.WriteFile(path, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)

	// Filtering by tool leaves the one execution that used it.
	do("filter by tool", chromedp.SendKeys(`#filters input[name=tool]`, "filesystem:read_file"),
		chromedp.Click(`#filters button[type=submit]`))
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelectorAll("#traces tbody tr[data-trace-id]").length === 1`,
		chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		t.Errorf("tool filter: %v (%d rows)", err, count(`#traces tbody tr[data-trace-id]`))
	}

	for _, u := range b.requested() {
		if !strings.HasPrefix(u, g.URL+"/") && !strings.HasPrefix(u, "data:") {
			t.Errorf("the page requested another origin: %s", u)
		}
	}
}

// browser is a headless Chromium driven by chromedp, with helpers that fail
// the test on error.
type browser struct {
	ctx  context.Context
	mu   sync.Mutex
	urls []string
	do   func(what string, steps ...chromedp.Action[chromedp.Void])
	// open clicks sel until want is visible.
	open  func(what, sel, want string)
	count func(sel string) int
	text  func(sel string) string
	// display is the computed CSS display of the first match of sel.
	display func(sel string) string
}

// startBrowser starts exe for the test; its context ends with the test or
// after 90 s.
func startBrowser(t *testing.T, exe string) *browser {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 1100),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	b := &browser{}
	// Listen starts the browser: on the context without a deadline, which
	// would otherwise bound the browser's whole life.
	if err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			b.mu.Lock()
			b.urls = append(b.urls, e.Request.URL)
			b.mu.Unlock()
		}
	}); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(cancelTimeout)
	b.ctx = ctx
	b.do = func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	// A click can land while the page is still settling after a sign-in
	// and be lost: twice in full CI runs (the machine at its busiest) the
	// first click on an execution opened nothing and the test waited out its
	// budget. open clicks again every 10 s; a page that never shows want
	// still fails at the budget.
	b.open = func(what, sel, want string) {
		t.Helper()
		for {
			err := chromedp.Do(ctx, chromedp.Click(sel))
			if err == nil {
				wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				err = chromedp.Do(wctx, chromedp.WaitVisible(want))
				cancel()
				if err == nil {
					return
				}
			}
			if ctx.Err() != nil {
				t.Fatalf("%s: %v", what, err)
			}
		}
	}
	b.count = func(sel string) int {
		t.Helper()
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll(`+strconv.Quote(sel)+`).length`))
		if err != nil {
			t.Fatalf("count %s: %v", sel, err)
		}
		return n
	}
	b.text = func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(sel))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return s
	}
	b.display = func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`getComputedStyle(document.querySelector(`+strconv.Quote(sel)+`)).display`))
		if err != nil {
			t.Fatalf("display of %s: %v", sel, err)
		}
		return s
	}
	return b
}

// requested lists the URLs the page asked for.
func (b *browser) requested() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.urls)
}
