package web_test

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/testfixture"
	"github.com/pml-go/pml/internal/upstream"
	"github.com/pml-go/pml/internal/wire"
)

// The catalog shows a capability's uses (the times it ran: the run that
// made it and its calls, docs/protocol.md) and each hosted server's state,
// with the start error of one that fails.
func TestBrowserCatalogUsesAndServerState(t *testing.T) {
	exe := chromium(t)
	g := gatewaytest.Start(t, gateway.Options{Config: gateway.FileConfig{Servers: map[string]gateway.ServerEntry{
		"fx":  {ServerConfig: upstream.ServerConfig{Command: testfixture.BuildServer(t)}, Hosted: true},
		"bad": {ServerConfig: upstream.ServerConfig{Command: "pml-no-such-command"}, Hosted: true},
	}}})
	s := g.Connect(t, g.Key, false)
	a := gatewaytest.Execute(t, s, wire.ExecuteRequest{Code: "const s = await mcp.math.add({a: 1, b: 2}); return await mcp.math.add({a: s, b: 3})", Intent: "add three numbers"})
	if a.Status != wire.StatusSuccess || a.Capability == nil {
		t.Fatalf("learning: %+v", a)
	}
	_, action, _ := strings.Cut(a.Capability.Name, ":")
	for range 2 {
		if a := gatewaytest.Execute(t, s, wire.ExecuteRequest{Code: "return await mcp.cap." + action + "({})"}); a.Status != wire.StatusSuccess {
			t.Fatalf("calling the capability: %+v", a)
		}
	}
	// Listing the tools starts fx and fails to start bad.
	if _, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "discover", Arguments: map[string]any{"query": "echo"}}); err != nil {
		t.Fatal(err)
	}

	b := startBrowser(t, exe)
	capRow := `#catalog tr[data-fqdn="` + a.Capability.FQDN + `"]`
	b.do("log in", chromedp.Navigate(g.URL+"/"), chromedp.WaitVisible(`#key`),
		chromedp.SendKeys(`#key`, g.Key), chromedp.Click(`#save-key`), chromedp.WaitVisible(capRow))
	// The gateway's page asks for a key; the workspace hint is not for it.
	if got := b.display(`#key-form`); got == "none" {
		t.Errorf("the gateway page hides its key form")
	}
	if got := b.display(`#workspace-hint`); got != "none" {
		t.Errorf("the gateway page shows the workspace hint (display %q)", got)
	}
	if got := strings.TrimSpace(b.text(capRow + ` td.uses`)); got != "3" {
		t.Errorf("capability uses %q, want 3 (its learned run and 2 calls)", got)
	}
	server := func(name string) string { return `#catalog tr[data-fqdn^="pml.mcp.` + name + `.server."]` }
	if n := b.count(server("bad") + ` td.state.state-failed .server-error`); n != 1 {
		t.Fatalf("bad: %d failed states with an error", n)
	}
	if got := b.text(server("bad") + ` .server-error`); !strings.Contains(got, "pml-no-such-command") {
		t.Errorf("bad's error %q", got)
	}
	if got := strings.TrimSpace(b.text(server("fx") + ` td.state`)); got != "ready" {
		t.Errorf("fx state %q", got)
	}
	if n := b.count(server("fx") + ` .server-error`); n != 0 {
		t.Errorf("a ready server shows an error")
	}
	if got := strings.TrimSpace(b.text(server("fx") + ` td.uses`)); got != "" {
		t.Errorf("a server shows uses %q", got)
	}
}
