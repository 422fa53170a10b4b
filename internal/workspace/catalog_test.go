package workspace

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/gatewayclient"
	"github.com/pml-go/pml/internal/testfixture"
	"github.com/pml-go/pml/internal/wire"
)

// reopen closes p, as a `pml exec` ends, and opens the workspace again, as
// the next command (`pml serve`) does.
func reopen(t *testing.T, p *Workspace, ws string) *Workspace {
	t.Helper()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	q, err := Open(context.Background(), ws, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = q.Close() })
	return q
}

func catalogEntry(t *testing.T, p *Workspace, id string) CatalogEntry {
	t.Helper()
	c, err := p.Catalog(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range c.Items {
		if e.ID == id {
			return e
		}
	}
	t.Fatalf("no %s in the catalog: %+v", id, c.Items)
	return CatalogEntry{}
}

// The page's catalog counts the calls of a capability the package ran on
// its machine, and a server used by another process is not shown as never
// used: it says when it last started, and once it listed its tools, which
// (issue 33, section 3, item 2).
func TestCatalogShowsLocalUsesAndUsedServers(t *testing.T) {
	bin := testfixture.BuildServer(t)
	p, ws := openLocal(t, fmt.Sprintf(`{"permissions": {"allow": ["*"]}, "mcpServers": {"fx": {"command": %q}}}`, bin))
	testfixture.WriteFile(t, ws, "note.txt", "hello")
	ctx := context.Background()
	svc := p.gw.(*gatewayclient.InProcess).Service
	ref, err := svc.LearnLocal(ctx, gateway.Caller{Scope: gateway.LocalScope, IsPackage: true}, wire.LearnRequest{Code: readCap, Intent: "shout a file"})
	if err != nil || ref == nil {
		t.Fatalf("learning: %+v %v", ref, err)
	}
	for range 3 {
		wantStatus(t, p.Execute(ctx, wire.ExecuteRequest{Code: `return await mcp.` + strings.Replace(ref.Name, ":", ".", 1) + `({path: "note.txt"})`}), wire.StatusSuccess)
	}
	wantStatus(t, p.Execute(ctx, wire.ExecuteRequest{Code: `return await mcp.fx.echo({text: "hi"})`}), wire.StatusSuccess)
	if e := catalogEntry(t, p, "fx"); e.State != "ready" || !strings.Contains(e.Description, "last started on ") {
		t.Errorf("fx in the process that runs it: %+v", e)
	}

	p = reopen(t, p, ws)
	if e := catalogEntry(t, p, ref.Name); e.Uses == nil || *e.Uses != 4 {
		t.Errorf("%s learned once and called 3 times: %+v (uses %v, want 4)", ref.Name, e, e.Uses)
	}
	e := catalogEntry(t, p, "fx")
	if e.State != "idle" || !strings.Contains(e.Description, "last started on ") || strings.Contains(e.Description, "first use") {
		t.Errorf("fx, used by the previous process: %+v", e)
	}

	// Discover lists (and so starts) every local server: the next process
	// knows fx's tools without starting it.
	if _, err := p.Discover(ctx, wire.DiscoverRequest{Query: "echo"}); err != nil {
		t.Fatal(err)
	}
	p = reopen(t, p, ws)
	if e := catalogEntry(t, p, "fx"); e.State != "idle" || !strings.Contains(e.Description, "tools, as it listed them on ") {
		t.Errorf("fx, listed by the previous process: %+v", e)
	}
	if e := catalogEntry(t, p, "fx:echo"); e.Kind != "tool" || e.Description != "returns text" {
		t.Errorf("fx:echo from the record: %+v", e)
	}
	if st := p.pool.Statuses()["fx"]; st.State != "idle" {
		t.Errorf("the catalog started fx: %+v", st)
	}
}

// The catalog lists as servers only those of .pml.json and its installed
// dependencies: the pml namespace, the admin tool served in the process,
// is a built-in tool, not a server "from .pml.json – installed
// dependency" (issue 41).
func TestCatalogListsOnlyRealServers(t *testing.T) {
	bin := testfixture.BuildServer(t)
	p, _ := openLocal(t, fmt.Sprintf(`{"permissions": {"allow": ["*"]}, "mcpServers": {"fx": {"command": %q}}}`, bin))
	c, err := p.Catalog(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var servers []string
	admin := false
	for _, e := range c.Items {
		if e.Kind == "server" {
			servers = append(servers, e.ID)
		}
		if e.ID == adminToolID {
			admin = e.Kind == "tool" && e.Source == "built-in"
		}
	}
	if fmt.Sprint(servers) != "[fx]" {
		t.Errorf("servers %v, want [fx], the one of .pml.json", servers)
	}
	if !admin {
		t.Errorf("%s is not listed as a built-in tool: %+v", adminToolID, c.Items)
	}
}
