package gateway_test

import (
	"context"
	"encoding/json"
	"io"
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

// Every successful run is saved; the same code is one capability.
func TestCapabilityLearnAndDedupe(t *testing.T) {
	g := startRegistry(t)
	s := g.Connect(t, g.Key, false)
	first := learn(t, s, sumCode, "Sum two numbers")
	again := learn(t, s, sumCode, "something else entirely")
	if again != first {
		t.Fatalf("same code, two capabilities: %+v %+v", first, again)
	}
	noIntent := learn(t, s, "return (await mcp.math.add({a: 1, b: 1})) * 2", "")
	if noIntent.Name != "cap:add_math" { // from what its tool does (docs/how-it-works.md)
		t.Fatalf("default name without an intent: %s", noIntent.Name)
	}
	c, err := g.Service.Store().CapabilityByID(context.Background(), first.ID)
	if err != nil {
		t.Fatal(err)
	}
	if c.UsageCount != 2 || c.Routing != "server" || strings.Join(c.ToolsUsed, ",") != "math:add" ||
		!strings.Contains(string(c.ArgsSchema), `"a"`) || c.Description != "Sum two numbers" {
		t.Fatalf("stored %+v (args schema %s)", c, c.ArgsSchema)
	}
	// Run for another task, it is not yet a habit; run again for its own
	// intent (in other case), it is (store.Capability.Habit).
	habit := func() bool {
		t.Helper()
		d, err := g.Service.Discover(context.Background(), gateway.Caller{Scope: store.Scope{Org: "acme", Project: "web"}},
			wire.DiscoverRequest{Name: first.Name, Schemas: true})
		if err != nil || len(d.Tools) != 1 {
			t.Fatalf("discover %s: %+v, %v", first.Name, d, err)
		}
		return d.Tools[0].Repeated
	}
	if habit() {
		t.Fatal("a capability run once for its intent and once for another task is a habit")
	}
	learn(t, s, sumCode, "sum two NUMBERS")
	if !habit() {
		t.Fatal("a capability run twice for its intent is not a habit")
	}
	// A failed run is not saved.
	a := gatewaytest.Execute(t, s, wire.ExecuteRequest{Code: "throw new Error('no')", Intent: "fails"})
	if a.Status != wire.StatusError || a.Capability != nil {
		t.Fatalf("failed run: %+v", a)
	}
	// Another tenant running the same code gets its own capability.
	other := g.Connect(t, g.NewKey(t, store.Scope{Org: "globex", Project: "web"}), false)
	if theirs := learn(t, other, sumCode, "Sum two numbers"); theirs.ID == first.ID || !strings.HasPrefix(theirs.FQDN, "globex.web.") {
		t.Fatalf("other tenant: %+v", theirs)
	}
	// Discover lists each tenant's own capabilities only.
	for _, sc := range []store.Scope{{Org: "globex", Project: "web"}, {Org: "acme", Project: "api"}} {
		d, err := g.Service.Discover(context.Background(), gateway.Caller{Scope: sc}, wire.DiscoverRequest{Pattern: "cap"})
		if err != nil {
			t.Fatal(err)
		}
		for _, hit := range d.Tools {
			if strings.HasPrefix(hit.FQDN, "acme.web.") {
				t.Errorf("%v discovers %s", sc, hit.FQDN)
			}
		}
	}
}

// Capabilities are callable from code (nested, args bound) and by call,
// under their new name after a rename.
func TestCapabilityRenameAndCall(t *testing.T) {
	g := startRegistry(t)
	s := g.Connect(t, g.Key, false)
	ref := learn(t, s, sumCode, "Sum two numbers")
	out, failed := admin(t, s, wire.AdminRequest{Action: "rename", Target: ref.FQDN, NewNamespace: "calc", NewAction: "sum"})
	if failed.Status != "" {
		t.Fatal(failed)
	}
	if out.Capability.Name != "calc:sum" || out.Capability.ID != ref.ID || !strings.HasPrefix(out.Capability.FQDN, "acme.web.calc.sum.") {
		t.Fatalf("renamed: %+v", out)
	}
	a := gatewaytest.Execute(t, s, wire.ExecuteRequest{Code: `
		const a = await mcp.calc.sum({ a: 40, b: 2 });
		const b = await mcp.calc.sum({});
		return [a, b];`})
	if a.Status != wire.StatusSuccess || string(a.Result) != "[42,3]" {
		t.Fatalf("calling the capability: %+v", a)
	}
	text, isErr := callTool(t, s, "call", wire.CallRequest{Tool: "calc:sum", Args: json.RawMessage(`{"a":5,"b":5}`)})
	if isErr || text != "10" {
		t.Fatalf("call: %s", text)
	}
	// The old name stays the project's alias of the new one.
	if a := gatewaytest.Execute(t, s, wire.ExecuteRequest{Code: `return await mcp.cap.sum_numbers({a: 2, b: 2})`}); a.Status != wire.StatusSuccess || string(a.Result) != "4" {
		t.Fatalf("the old name: %+v %s", a, a.Result)
	}
	if r := get(t, g, g.Key, "/mcp/"+out.Capability.FQDN); r.status != http.StatusOK || string(r.body) != sumCode {
		t.Fatalf("registry under the new name: HTTP %d", r.status)
	}
	// The old name leads to the capability as it is now.
	if r := get(t, g, g.Key, "/mcp/"+ref.FQDN); r.status != http.StatusOK || string(r.body) != sumCode {
		t.Fatalf("registry under the old name: HTTP %d", r.status)
	}
	// describe changes what discover shows.
	desc := "Adds a and b."
	if _, failed := admin(t, s, wire.AdminRequest{Action: "describe", Target: ref.ID, Description: &desc}); failed.Status != "" {
		t.Fatal(failed)
	}
	d, err := g.Service.Discover(context.Background(), gateway.Caller{Scope: store.Scope{Org: "acme", Project: "web"}}, wire.DiscoverRequest{Name: "calc:sum"})
	if err != nil || len(d.Tools) != 1 {
		t.Fatalf("discover: %+v %v", d, err)
	}
	hit := d.Tools[0]
	if hit.Kind != "capability" || hit.FQDN != out.Capability.FQDN || !strings.HasPrefix(hit.Description, desc+" Takes a, b.") || hit.Routing != "server" ||
		!strings.Contains(hit.Declaration, "mcp.calc.sum(") {
		t.Fatalf("discover hit %+v", hit)
	}
}

// A capability failing or recursing is a catchable TOOL_ERROR of its caller.
func TestCapabilityNestedFailures(t *testing.T) {
	g := startRegistry(t)
	s := g.Connect(t, g.Key, false)
	boom := learn(t, s, "if (args.fail) throw new Error('asked to fail'); return (await mcp.math.add({a: 1, b: 1})) && 'fine'", "maybe fail")
	// Stored without running: it calls itself. (A package's report of it is
	// refused, as it names no tool of the project: it cannot have run.)
	loop, err := g.Service.Store().SaveCapability(context.Background(), store.Capability{Scope: store.Scope{Org: "acme", Project: "web"},
		Namespace: "cap", Action: "loop_forever", Code: "const r = await mcp.cap.loop_forever(args); return r", Description: "loop forever",
		ToolsUsed: []string{"cap:loop_forever"}, Routing: "server"})
	if err != nil || boom.Name != "cap:maybe_fail" {
		t.Fatalf("names %+v %s (%v)", loop, boom.Name, err)
	}
	a := gatewaytest.Execute(t, s, wire.ExecuteRequest{Code: `
		try { await mcp.cap.maybe_fail({ fail: true }) } catch (e) { return [e.code, e.message, await mcp.cap.maybe_fail({})] }`})
	if a.Status != wire.StatusSuccess || !strings.Contains(string(a.Result), `"TOOL_ERROR","capability cap:maybe_fail failed: asked to fail","fine"`) {
		t.Fatalf("caught failure: %+v %s", a, a.Result)
	}
	a = gatewaytest.Execute(t, s, wire.ExecuteRequest{Code: `return await mcp.cap.loop_forever({})`})
	wantError(t, a, pmlerr.ToolError)
	if !strings.Contains(a.Error, "capabilities nested") {
		t.Fatalf("recursion: %s", a.Error)
	}
	alive(t, s)
}

// A capability's routing counts in its caller's plan: one that touches the
// user's machine makes its caller client code.
func TestCapabilityRoutingInPlan(t *testing.T) {
	g := startRegistry(t)
	scope := gateway.Caller{Scope: store.Scope{Org: "acme", Project: "web"}, IsPackage: true}
	ref, err := g.Service.LearnLocal(context.Background(), scope,
		wire.LearnRequest{Code: `const text = await mcp.filesystem.read_file({ path: args.path }); return text`, Intent: "Read a file"})
	if err != nil || ref == nil || ref.Name != "cap:read_file" {
		t.Fatalf("learn local: %+v %v", ref, err)
	}
	pkg := g.Connect(t, g.Key, true)
	code := `const t = await mcp.cap.read_file({ path: "x" }); return await mcp.json.parse({ data: t });`
	a := gatewaytest.Execute(t, pkg, wire.ExecuteRequest{Code: code})
	if a.Status != wire.StatusExecuteLocally || len(a.ClientTools) != 1 || a.ClientTools[0] != "cap:read_file" {
		t.Fatalf("plan: %+v", a)
	}
	raw, _ := json.Marshal(a.ToolsUsed)
	var refs []wire.ToolRef
	if err := json.Unmarshal(raw, &refs); err != nil || len(refs) != 2 ||
		refs[0] != (wire.ToolRef{ID: "cap:read_file", FQDN: ref.FQDN, Routing: "client"}) ||
		refs[1].Routing != "server" || !strings.HasPrefix(refs[1].FQDN, "pml.std.json.parse.") {
		t.Fatalf("tools_used %s", raw)
	}
	wantError(t, gatewaytest.Execute(t, g.Connect(t, g.Key, false), wire.ExecuteRequest{Code: code}), pmlerr.ClientToolsRequirePackage)
	// The gateway never runs it, even by call.
	text, isErr := callTool(t, pkg, "call", wire.CallRequest{Tool: "cap:read_file"})
	if !isErr || !strings.Contains(text, "PERMISSION_DENIED") {
		t.Fatalf("call of a client capability: %s", text)
	}
	alive(t, pkg)
}

func TestAdminErrors(t *testing.T) {
	g := startRegistry(t)
	s := g.Connect(t, g.Key, false)
	ref := learn(t, s, sumCode, "Sum two numbers")
	sibling := g.Connect(t, g.NewKey(t, store.Scope{Org: "acme", Project: "api"}), false)
	if _, failed := admin(t, s, visibility(ref.ID, "org")); failed.Status != "" {
		t.Fatal(failed)
	}
	foreign := g.Connect(t, g.NewKey(t, store.Scope{Org: "globex", Project: "web"}), false)
	tests := []struct {
		name string
		s    *mcp.ClientSession
		req  wire.AdminRequest
		code pmlerr.Code
	}{
		{"no action", s, wire.AdminRequest{Target: ref.ID}, pmlerr.InvalidRequest},
		{"bad action", s, wire.AdminRequest{Action: "delete", Target: ref.ID}, pmlerr.InvalidRequest},
		{"no target", s, wire.AdminRequest{Action: "rename", NewAction: "x"}, pmlerr.InvalidRequest},
		{"unknown id", s, wire.AdminRequest{Action: "rename", Target: "nope", NewAction: "x"}, pmlerr.UnknownTool},
		{"unknown fqdn", s, wire.AdminRequest{Action: "rename", Target: "acme.web.cap.nope", NewAction: "x"}, pmlerr.UnknownTool},
		{"built-in", s, wire.AdminRequest{Action: "rename", Target: "pml.std.json.parse", NewAction: "x"}, pmlerr.InvalidRequest},
		{"stale hash", s, wire.AdminRequest{Action: "rename", Target: ref.FQDN[:len(ref.FQDN)-4] + otherHash(ref.FQDN), NewAction: "x"}, pmlerr.InvalidRequest},
		{"client built-in namespace", s, wire.AdminRequest{Action: "rename", Target: ref.ID, NewNamespace: "filesystem"}, pmlerr.NamespaceReserved},
		{"std namespace", s, wire.AdminRequest{Action: "rename", Target: ref.ID, NewNamespace: "json"}, pmlerr.NamespaceReserved},
		{"default rules' client namespace", s, wire.AdminRequest{Action: "rename", Target: ref.ID, NewNamespace: "docker"}, pmlerr.NamespaceReserved},
		{"another letter case", s, wire.AdminRequest{Action: "rename", Target: ref.ID, NewNamespace: "Git"}, pmlerr.NamespaceReserved},
		{"hosted namespace", s, wire.AdminRequest{Action: "rename", Target: ref.ID, NewNamespace: "tavily"}, pmlerr.NamespaceReserved},
		{"catalog namespace", s, wire.AdminRequest{Action: "rename", Target: ref.ID, NewNamespace: "serena"}, pmlerr.NamespaceReserved},
		{"qualified namespace", s, wire.AdminRequest{Action: "rename", Target: ref.ID, NewNamespace: "acme.web.calc"}, pmlerr.InvalidRequest},
		{"bad name", s, wire.AdminRequest{Action: "rename", Target: ref.ID, NewAction: "has space"}, pmlerr.InvalidRequest},
		{"nothing to rename", s, wire.AdminRequest{Action: "rename", Target: ref.ID}, pmlerr.InvalidRequest},
		{"no target", s, wire.AdminRequest{Action: "show"}, pmlerr.InvalidRequest},
		{"unknown action", s, wire.AdminRequest{Action: "publish", Target: ref.ID}, pmlerr.InvalidRequest},
		{"secret description", s, wire.AdminRequest{Action: "describe", Target: ref.ID, Description: ptr("calls with token=ghp_abcdefghijklmnopqrstuvwxyz0123456789")}, pmlerr.InvalidRequest},
		{"secret name", s, wire.AdminRequest{Action: "rename", Target: ref.ID, NewAction: "ghp_abcdefghijklmnopqrstuvwxyz0123456789"}, pmlerr.InvalidRequest},
		{"bad visibility", s, wire.AdminRequest{Action: "visibility", Target: ref.ID, Visibility: "world"}, pmlerr.InvalidRequest},
		{"sibling project", sibling, wire.AdminRequest{Action: "rename", Target: ref.ID, NewAction: "x"}, pmlerr.PermissionDenied},
		{"other org", foreign, wire.AdminRequest{Action: "rename", Target: ref.ID, NewAction: "x"}, pmlerr.UnknownTool},
	}
	for _, tt := range tests {
		_, failed := admin(t, tt.s, tt.req)
		if failed.Status != wire.StatusError || failed.ErrorCode != tt.code || failed.Error == "" {
			t.Errorf("%s: %+v, want %s", tt.name, failed, tt.code)
		}
	}
	// Nothing changed, and the gateway still serves.
	if r := get(t, g, g.Key, "/mcp/"+ref.FQDN); r.status != http.StatusOK {
		t.Fatalf("after the errors: HTTP %d", r.status)
	}
	alive(t, s)
}

func otherHash(f string) string {
	if strings.HasSuffix(f, "0000") {
		return "ffff"
	}
	return "0000"
}

// POST /api/v1/capabilities: a package reports a successful local run.
func TestLearnEndpoint(t *testing.T) {
	g := startRegistry(t)
	post := func(key, body string) response {
		req, _ := http.NewRequest(http.MethodPost, g.URL+"/api/v1/capabilities", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return response{status: resp.StatusCode, header: resp.Header, body: b}
	}
	r := post(g.Key, `{"code":"const l = await mcp.filesystem.list_directory({path: \".\"}); return l.length","intent":"count files"}`)
	var ref wire.CapabilityRef
	if err := json.Unmarshal(r.body, &ref); err != nil || r.status != http.StatusOK || ref.Name != "cap:count_files" {
		t.Fatalf("HTTP %d %s", r.status, r.body)
	}
	c, _ := g.Service.Store().CapabilityByID(context.Background(), ref.ID)
	if c.Routing != "client" {
		t.Fatalf("a local run's capability routes %s", c.Routing)
	}
	if r := post(g.Key, `{"code":"return (","intent":"broken"}`); r.status != http.StatusBadRequest || r.json(t)["error_code"] != "SYNTAX_ERROR" {
		t.Fatalf("syntax error: HTTP %d %s", r.status, r.body)
	}
	if r := post(g.Key, `{"code":`); r.status != http.StatusBadRequest {
		t.Fatalf("bad JSON: HTTP %d", r.status)
	}
	if r := post("pml_bogus", `{"code":"return 1"}`); r.status != http.StatusUnauthorized {
		t.Fatalf("bad key: HTTP %d", r.status)
	}
	if r := post(g.Key, `{"code":"return 1"}`); r.status != http.StatusNoContent {
		t.Fatalf("next request: HTTP %d", r.status)
	}
}

func ptr[T any](v T) *T { return &v }
