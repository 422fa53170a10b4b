package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/wire"
)

// connectServing connects as a package that serves namespaces on its machine.
func connectServing(t *testing.T, g *gatewaytest.Gateway, key, namespaces string) *mcp.ClientSession {
	t.Helper()
	h := http.Header{}
	h.Set(wire.ClientHeader, "package")
	h.Set(wire.ClientNamespacesHeader, namespaces)
	return g.ConnectWith(t, key, h)
}

// mytoolSum starts a gateway whose tenant acme/web has a capability named
// mytool:sum, and connects to it as a package that says nothing of what it serves.
func mytoolSum(t *testing.T) (*gatewaytest.Gateway, *mcp.ClientSession, wire.CapabilityRef) {
	t.Helper()
	g := startRegistry(t)
	plain := g.Connect(t, g.Key, true)
	ref := learn(t, plain, sumCode, "Sum two numbers")
	if _, failed := admin(t, plain, wire.AdminRequest{Action: "rename", Target: ref.ID, NewNamespace: "mytool", NewAction: "sum"}); failed.Status != "" {
		t.Fatal(failed)
	}
	return g, plain, ref
}

// A namespace the caller's package serves is a client tool whatever the
// store holds under it: execute hands the code back, call refuses to run
// it here, discover leaves the capability out and rename refuses the name.
func TestClientNamespacesPinToClient(t *testing.T) {
	g, plain, ref := mytoolSum(t)
	const code = `return await mcp.mytool.sum({a: 1, b: 2})`
	// Without the header, the name is the project's capability.
	if a := gatewaytest.Execute(t, plain, wire.ExecuteRequest{Code: code}); a.Status != wire.StatusSuccess || string(a.Result) != "3" {
		t.Fatalf("capability run: %+v", a)
	}

	pkg := connectServing(t, g, g.Key, "filesystem,mytool,shell")
	a := gatewaytest.Execute(t, pkg, wire.ExecuteRequest{Code: code})
	raw, _ := json.Marshal(a.ToolsUsed)
	if a.Status != wire.StatusExecuteLocally || fmt.Sprint(a.ClientTools) != "[mytool:sum]" || string(raw) != `[{"id":"mytool:sum","routing":"client"}]` {
		t.Fatalf("served namespace: %+v %s", a, raw)
	}
	text, isErr := callTool(t, pkg, "call", wire.CallRequest{Tool: "mytool:sum"})
	if !isErr || !strings.Contains(text, string(pmlerr.PermissionDenied)) {
		t.Fatalf("call of a served namespace: %s", text)
	}
	d := discoverAllOf(t, pkg)
	if hit, ok := d["mytool:sum"]; ok {
		t.Fatalf("discover lists a capability under a served namespace: %+v", hit)
	}
	if hit := discoverAllOf(t, plain)["mytool:sum"]; hit.Owner != "acme/web" || hit.Kind != "capability" {
		t.Fatalf("without the header: %+v", hit)
	}
	if _, failed := admin(t, pkg, wire.AdminRequest{Action: "rename", Target: ref.ID, NewNamespace: "mytool", NewAction: "other"}); failed.ErrorCode != pmlerr.NamespaceReserved {
		t.Fatalf("rename into a served namespace: %+v", failed)
	}
	// A package serving a std namespace itself runs it.
	a = gatewaytest.Execute(t, connectServing(t, g, g.Key, "json"), wire.ExecuteRequest{Code: `return await mcp.json.parse({data: "1"})`})
	if a.Status != wire.StatusExecuteLocally {
		t.Fatalf("json served by the package: %+v", a)
	}
	// A local run reported with the header is learned as client code.
	ref2, err := g.Service.LearnLocal(context.Background(), gateway.Caller{Scope: store.Scope{Org: "acme", Project: "web"}, IsPackage: true,
		ClientNamespaces: []string{"fx"}}, wire.LearnRequest{Code: `const p = await mcp.fx.pid({}); return p`, Intent: "fx pid"})
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := g.Service.Store().CapabilityByID(context.Background(), ref2.ID); c.Routing != "client" {
		t.Fatalf("learned as %s", c.Routing)
	}
	alive(t, pkg)
}

// The header is bounded and only names namespaces: junk is ignored, and a
// list over 256 names keeps its first 256.
func TestClientNamespacesHeaderBounds(t *testing.T) {
	g, plain, _ := mytoolSum(t)
	const code = `return await mcp.mytool.sum({})`
	filler := make([]string, 256)
	for i := range filler {
		filler[i] = fmt.Sprintf("ns%d", i)
	}
	for header, want := range map[string]wire.Status{
		"mytool":                              wire.StatusExecuteLocally,
		" mytool , ,mytool":                   wire.StatusExecuteLocally,
		"my tool,mytool.x,mytool:sum,*,x/../": wire.StatusSuccess,
		strings.Join(filler, ",") + ",mytool": wire.StatusSuccess,
		strings.Repeat("x", 200) + ",mytool":  wire.StatusExecuteLocally,
	} {
		a := gatewaytest.Execute(t, connectServing(t, g, g.Key, header), wire.ExecuteRequest{Code: code})
		if a.Status != want {
			t.Errorf("header %.40q: %s %s, want %s", header, a.Status, a.Error, want)
		}
	}
	alive(t, plain)
}

// Discover names each capability's owner and the id that calls it: bare
// for the caller's project and org, qualified for another org's public one.
func TestDiscoverLabelsOwners(t *testing.T) {
	g := startRegistry(t)
	acme := g.Connect(t, g.Key, true) // a package: it approves other orgs' skills itself
	own := learn(t, acme, sumCode, "Sum two numbers")
	sibling := g.Connect(t, g.NewKey(t, store.Scope{Org: "acme", Project: "api"}), false)
	shared := learn(t, sibling, "return 'from api ' + await mcp.math.add({a: 1, b: 1})", "api hello")
	if _, failed := admin(t, sibling, visibility(shared.ID, "org")); failed.Status != "" {
		t.Fatal(failed)
	}
	globex := g.Connect(t, g.NewKey(t, store.Scope{Org: "globex", Project: "web"}), false)
	// The same name as acme's own, and a name acme has nothing under.
	theirs := learn(t, globex, "return 'globex: ' + JSON.stringify(args) + await mcp.math.add({a: 1, b: 1})", "Sum two numbers")
	other := learn(t, globex, "return 'globex only ' + await mcp.math.add({a: 1, b: 1})", "globex only")
	for _, id := range []string{theirs.ID, other.ID} {
		if _, failed := admin(t, globex, visibility(id, "public")); failed.Status != "" {
			t.Fatal(failed)
		}
	}

	d := discoverAllOf(t, acme)
	want := map[string]struct{ owner, fqdn string }{
		"cap:sum_numbers":            {"acme/web", own.FQDN},
		"cap:api_hello":              {"acme/api", shared.FQDN},
		"globex.web.cap:sum_numbers": {"globex/web", theirs.FQDN},
		"globex.web.cap:globex_only": {"globex/web", other.FQDN},
	}
	for id, w := range want {
		hit, ok := d[id]
		if !ok || hit.Owner != w.owner || hit.FQDN != w.fqdn || hit.Kind != "capability" {
			t.Errorf("%s: %+v, want owner %s fqdn %s", id, hit, w.owner, w.fqdn)
		}
	}
	if hit := d["globex.web.cap:globex_only"]; !strings.HasPrefix(hit.Description, "[public capability of globex/web") ||
		!strings.Contains(hit.Declaration, `mcp["globex.web.cap"].globex_only(`) {
		t.Errorf("foreign hit: %+v", hit)
	}
	if hit, ok := d["cap:globex_only"]; ok {
		t.Errorf("another org's capability under a bare name: %+v", hit)
	}

	// The bare name calls acme's own; the qualified one calls globex's; a
	// stale pinned hash calls nothing.
	a := gatewaytest.Execute(t, acme, wire.ExecuteRequest{Code: `return [
		await mcp.cap.sum_numbers({a: 1, b: 1}),
		await mcp["globex.web.cap"].sum_numbers({a: 1, b: 1}),
		await mcp["globex.web.cap"]["globex_only.` + hash4(other.FQDN) + `"]({})]`})
	if a.Status != wire.StatusSuccess || string(a.Result) != `[2,"globex: {\"a\":1,\"b\":1}2","globex only 2"]` {
		t.Fatalf("calls: %+v %s", a, a.Result)
	}
	wantError(t, gatewaytest.Execute(t, acme, wire.ExecuteRequest{Code: `return await mcp.cap.globex_only({})`}), pmlerr.UnknownTool)
	wantError(t, gatewaytest.Execute(t, acme, wire.ExecuteRequest{Code: `return await mcp["globex.web.cap"]["globex_only.` +
		otherHash(other.FQDN) + `"]({})`}), pmlerr.UnknownTool)
	alive(t, acme)
}

func hash4(fqdn string) string { return fqdn[len(fqdn)-4:] }

// discoverAllOf returns every discover hit of a session by id.
func discoverAllOf(t *testing.T, s *mcp.ClientSession) map[string]wire.DiscoveredTool {
	t.Helper()
	text, isErr := callTool(t, s, "discover", wire.DiscoverRequest{Limit: 1000})
	if isErr {
		t.Fatal(text)
	}
	var out wire.DiscoverAnswer
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		t.Fatal(err)
	}
	m := map[string]wire.DiscoveredTool{}
	for _, d := range out.Tools {
		m[d.ID] = d
	}
	return m
}
