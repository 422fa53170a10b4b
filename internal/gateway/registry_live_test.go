package gateway_test

import (
	"context"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/registry"
	"github.com/pml-go/pml/internal/registry/client"
	"github.com/pml-go/pml/internal/testfixture"
	"github.com/pml-go/pml/internal/upstream"
	"github.com/pml-go/pml/internal/wire"
)

// A hosted server's entry lists the tools the gateway learned from it and
// says why it fails to start, while its name and integrity stay those of
// its configuration: a lockfile pinning the entry sees no change, and the
// package still verifies what it fetches.
func TestHostedServerEntryToolsOutsideIntegrity(t *testing.T) {
	g := gatewaytest.Start(t, gateway.Options{Config: gateway.FileConfig{Servers: map[string]gateway.ServerEntry{
		"fx":  {ServerConfig: upstream.ServerConfig{Command: testfixture.BuildServer(t)}, Hosted: true},
		"bad": {ServerConfig: upstream.ServerConfig{Command: "pml-no-such-command"}, Hosted: true},
	}}})
	ctx := context.Background()
	pkg := client.New(g.URL, gatewaytest.HTTPClient(http.Header{"Authorization": {"Bearer " + g.Key}}), filepath.Join(t.TempDir(), "registry"))
	fetch := func(name string) client.Entry {
		t.Helper()
		e, err := pkg.Fetch(ctx, name)
		if err != nil || e.Metadata == nil {
			t.Fatalf("package fetch %s: %+v %v", name, e, err)
		}
		return e
	}
	// Never started: no tools yet, and the gateway did not start it to answer.
	before := fetch("pml.mcp.fx.server")
	if len(before.Metadata.Tools) != 0 || !slices.Equal(before.Metadata.Warnings, []string{"hosted: runs on the gateway"}) {
		t.Fatalf("before start: %+v", before.Metadata)
	}
	badBefore := fetch("pml.mcp.bad.server")

	s := g.Connect(t, g.Key, false)
	d := discover(t, s, wire.DiscoverRequest{Pattern: "fx:*", Limit: 100, Schemas: true}) // every tool, whole descriptions
	if len(d.Tools) == 0 {
		t.Fatal("fx has no tools")
	}
	if d := discover(t, s, wire.DiscoverRequest{Pattern: "bad:*"}); d.Servers["bad"].State != "failed" {
		t.Fatalf("bad: %+v", d.Servers)
	}

	// The five-part name fetched again (a fresh client: no cached copy).
	pkg = client.New(g.URL, gatewaytest.HTTPClient(http.Header{"Authorization": {"Bearer " + g.Key}}), "")
	after := fetch(before.FQDN)
	if after.FQDN != before.FQDN || after.Integrity != before.Integrity || after.Content != before.Content {
		t.Fatalf("the entry changed with its tools: %s %s → %s %s", before.FQDN, before.Integrity, after.FQDN, after.Integrity)
	}
	var want []registry.ServerTool
	for _, tl := range d.Tools {
		want = append(want, registry.ServerTool{Name: strings.TrimPrefix(tl.ID, "fx:"), Description: tl.Description})
	}
	got := after.Metadata.Tools
	slices.SortFunc(got, func(a, b registry.ServerTool) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(want, func(a, b registry.ServerTool) int { return strings.Compare(a.Name, b.Name) })
	if !slices.Equal(got, want) {
		t.Fatalf("tools %+v, want %+v", got, want)
	}

	badAfter := fetch("pml.mcp.bad.server")
	w := badAfter.Metadata.Warnings
	if badAfter.FQDN != badBefore.FQDN || badAfter.Integrity != badBefore.Integrity || len(w) != 2 ||
		w[0] != "hosted: runs on the gateway" || !strings.HasPrefix(w[1], "failed to start: ") ||
		!strings.Contains(w[1], "pml-no-such-command") || len(badAfter.Metadata.Tools) != 0 {
		t.Fatalf("bad after failing: %s %+v (before %s)", badAfter.FQDN, badAfter.Metadata, badBefore.FQDN)
	}
	// The previous name of an entry still answers with the current one.
	r := get(t, g, g.Key, "/mcp/pml.mcp.fx.server.0000")
	if before.FQDN[len(before.FQDN)-4:] != "0000" && (r.status != http.StatusNotFound || r.json(t)["currentFqdn"] != before.FQDN) {
		t.Fatalf("stale hash: HTTP %d %s", r.status, r.body)
	}
	alive(t, s)
}
