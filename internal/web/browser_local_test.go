package web_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/pml-go/pml/internal/httpserve"
	"github.com/pml-go/pml/internal/wire"
	"github.com/pml-go/pml/internal/workspace"
)

// Local mode's `pml serve`, in real headless Chromium: the address it
// prints opens the workspace's page (no key form) with no key typed; the
// page lists the local store's execution and what the workspace can call
// (built-ins, its servers with their state, the gateway's tools, learned
// capabilities), takes the token out of the address bar, keeps it for a
// reload without it, and requests no other origin.
func TestBrowserLocalServePage(t *testing.T) {
	exe := chromium(t)
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, ".pml.json"), []byte(`{"version": "1", "permissions": {"allow": ["*"]}, "mcpServers": {"notes": {"command": "pml-no-such-notes-server"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PML_CLOUD_URL", "")
	t.Setenv("PML_WORKSPACE", ws)
	p, err := workspace.Open(context.Background(), ws, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	a := p.Execute(context.Background(), wire.ExecuteRequest{Code: `const h = await mcp.crypto.sha256({ data: "local" }); return await mcp.crypto.sha256({ data: h })`, Intent: "hash twice"})
	if a.Status != wire.StatusSuccess || a.Capability == nil {
		t.Fatalf("run: %+v", a)
	}
	// The trace reaches the in-process store in the background.
	deadline := time.Now().Add(30 * time.Second)
	for {
		rec := httptest.NewRecorder()
		p.TraceReader().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/traces/"+a.TraceID, nil))
		if rec.Code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("trace never stored: HTTP %d", rec.Code)
		}
		time.Sleep(50 * time.Millisecond)
	}

	token, err := workspace.ServeToken(ws)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- p.HTTPServer(workspace.ServeOptions{Token: token}, httpserve.Limits{}).Serve(ctx, ln)
	}()
	t.Cleanup(func() { stop(); <-served })
	base := "http://" + ln.Addr().String()

	b := startBrowser(t, exe)
	row := `#traces tbody tr[data-trace-id="` + a.TraceID + `"]`
	b.do("open the printed address", chromedp.Navigate(workspace.ViewerURL(ln.Addr().String(), token)), chromedp.WaitVisible(row))
	if n := b.count(`#traces tbody tr[data-trace-id]`); n != 1 {
		t.Errorf("%d executions listed, want 1", n)
	}
	loc, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`location.href`))
	if err != nil || strings.Contains(loc, token) {
		t.Errorf("the token stays in the address bar: %q %v", loc, err)
	}
	for sel, want := range map[string]string{`#key-form`: "none", `#key-hint`: "none", `#workspace-hint`: "block"} {
		if got := b.display(sel); got != want {
			t.Errorf("%s display %q, want %q", sel, got, want)
		}
	}
	if got := b.text(`h1 span`); got != "workspace" {
		t.Errorf("heading %q", got)
	}
	catalogRow := func(id string) string { return `#catalog tr[data-id="` + id + `"]` }
	b.do("the catalog", chromedp.WaitVisible(catalogRow(a.Capability.Name)))
	for id, want := range map[string]string{
		"filesystem:read_file": "built-in", "notes": ".pml.json", "crypto:sha256": "gateway", a.Capability.Name: "gateway",
	} {
		if n := b.count(catalogRow(id)); n != 1 {
			t.Errorf("catalog: %d rows of %s", n, id)
			continue
		}
		if got := b.text(catalogRow(id) + ` td:nth-child(4)`); got != want {
			t.Errorf("catalog: %s from %q, want %q", id, got, want)
		}
	}
	if got := strings.TrimSpace(b.text(catalogRow("notes") + ` td.state`)); got != "idle" {
		t.Errorf("notes state %q, want idle (the page starts no server)", got)
	}
	if got := strings.TrimSpace(b.text(catalogRow(a.Capability.Name) + ` td.uses`)); got == "" {
		t.Errorf("the capability shows no uses")
	}
	b.open("open it", row, `#dag svg g.node`)
	if n := b.count(`#dag svg g.node`); n != 2 {
		t.Errorf("DAG: %d nodes, want 2", n)
	}
	b.do("reload without the token", chromedp.Navigate(base+"/"), chromedp.WaitVisible(row))
	for _, u := range b.requested() {
		if !strings.HasPrefix(u, base+"/") && !strings.HasPrefix(u, "data:") {
			t.Errorf("the page requested another origin: %s", u)
		}
	}
}
