//go:build linux

package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/testfixture"
	"github.com/pml-go/pml/internal/wire"
)

// The life of a skill in a workspace whose permissions.allow names tools,
// as pml init writes it (issue 35 section 3): the answer of a kept run
// names the skill, one's own skill whose tools are allowed runs without a
// question, and a run that returns nothing is not kept.
func TestOwnSkillLife(t *testing.T) {
	g := startGateway(t, gateway.Options{})
	ws := testfixture.Workspace(t, nil)
	testfixture.WriteFile(t, ws, ".pml.json", `{"version": "1", "permissions": {"allow": ["filesystem", "json"]}}`)
	testfixture.WriteFile(t, ws, "a.json", `{"items": [1, 2]}`)
	testfixture.WriteFile(t, ws, "b.json", `{"items": [3]}`)
	p := startStdio(t, ws, gatewayEnv(g))

	const code = `const t = await mcp.filesystem.read_file({path: %q}); const d = await mcp.json.parse({data: t}); return d.items.length`
	var kept *wire.CapabilityRef
	for _, path := range []string{"a.json", "b.json"} {
		a := p.executeReq(t, wire.ExecuteRequest{Code: sprintf(code, path), Intent: "count the items of a json file"})
		wantLocal(t, a, nil)
		if a.Capability == nil || a.Capability.Name != "cap:count_items_json_file" {
			t.Fatalf("the answer does not say what was kept: %+v", a.Capability)
		}
		kept = a.Capability
	}
	// Its parameter says what it is for, in its tool's words.
	if d := p.discover(t, wire.DiscoverRequest{Name: "cap:count_items_json_file"}).Tools; len(d) != 1 ||
		!strings.Contains(d[0].Declaration, "A path relative to the workspace") || !strings.Contains(d[0].Declaration, "(path of filesystem:read_file)") {
		t.Fatalf("declaration: %+v", d)
	}
	// Its own skill: allowed through its tools, no question.
	var n int
	if a := p.execute(t, `return await mcp.cap.count_items_json_file({path: "a.json"})`); a.Status != wire.StatusSuccess {
		t.Fatalf("own skill: %s %+v %+v", a.Description, a.ApprovalType, a.Context)
	} else {
		wantLocal(t, a, &n)
	}
	if n != 2 {
		t.Fatalf("own skill counted %d", n)
	}

	// Code cannot share or forget a skill behind the person's back:
	// pml:admin, not in the allow list, asks; declined, the skill stays.
	ask := p.execute(t, `return await mcp.pml.admin({action: "visibility", target: "cap:count_items_json_file", visibility: "public"})`)
	if ask.Status != wire.StatusApprovalRequired || !strings.Contains(ask.Description, "pml:admin") {
		t.Fatalf("pml:admin without approval: %+v", ask)
	}
	p.executeReq(t, wire.ExecuteRequest{ContinueWorkflow: &wire.ContinueWorkflow{WorkflowID: ask.WorkflowID, Approved: wire.Bool(false)}})
	wantLocal(t, p.execute(t, `return await mcp.cap.count_items_json_file({path: "b.json"})`), &n)
	if c, err := g.Service.Store().CapabilityByName(context.Background(), store.Scope{Org: "acme", Project: "web"}, "cap", "count_items_json_file"); err != nil ||
		n != 1 || c.Visibility != store.VisibilityPrivate {
		t.Fatalf("after the declined admin call: %d, %+v %v", n, c.Visibility, err)
	}

	// A snippet that forgot its return is not kept, and says so by saying
	// nothing; the next run is served.
	forgot := p.execute(t, `const t = await mcp.filesystem.read_file({path: "a.json"}); await mcp.json.parse({data: t});`)
	wantLocal(t, forgot, nil)
	if forgot.Capability != nil {
		t.Fatalf("a run returning nothing was kept as %+v", forgot.Capability)
	}
	for _, d := range p.discover(t, discoverAll()).Tools {
		if d.Kind == "capability" && strings.Contains(d.Declaration, "Promise<null>") {
			t.Fatalf("a skill returning nothing: %+v", d)
		}
	}
	if kept.ID == "" {
		t.Fatal("no id")
	}
}

// A renamed skill keeps answering to its old name, also from a skill built
// on it; renaming onto a reserved or Object.prototype name is refused and
// the next call is served; admin is reached from code, as discover's
// description says, and forgets a skill.
func TestRenameAndForgetFromCode(t *testing.T) {
	g := startGateway(t, gateway.Options{})
	ws := testfixture.Workspace(t, nil)
	testfixture.WriteFile(t, ws, ".pml.json", `{"version": "1", "permissions": {"allow": ["filesystem", "json", "pml:admin"]}}`)
	testfixture.WriteFile(t, ws, "a.json", `{"items": [1, 2]}`)
	testfixture.WriteFile(t, ws, "b.json", `{"items": [3]}`)
	p := startStdio(t, ws, gatewayEnv(g))
	const code = `const t = await mcp.filesystem.read_file({path: %q}); const d = await mcp.json.parse({data: t}); return d.items.length`
	for _, path := range []string{"a.json", "b.json"} {
		wantLocal(t, p.executeReq(t, wire.ExecuteRequest{Code: sprintf(code, path), Intent: "count the items of a json file"}), nil)
	}
	// A skill built on it, by its first name.
	const outer = `const n = await mcp.cap.count_items_json_file({path: %q}); const m = await mcp.json.parse({data: "[1]"}); return n + m.length`
	for _, path := range []string{"a.json", "b.json"} {
		wantLocal(t, p.executeReq(t, wire.ExecuteRequest{Code: sprintf(outer, path), Intent: "count items plus one"}), nil)
	}

	admin := func(req string) wire.Answer {
		return p.execute(t, `return await mcp.pml.admin(`+req+`)`)
	}
	var renamed map[string]any
	wantLocal(t, admin(`{action: "rename", target: "cap:count_items_json_file", new_action: "count_items"}`), &renamed)
	for _, bad := range []string{"__proto__", "constructor", "toString"} {
		wantError(t, admin(`{action: "rename", target: "cap:count_items", new_action: "`+bad+`"}`), pmlerr.InvalidRequest, bad)
	}
	wantError(t, admin(`{action: "rename", target: "cap:count_items", new_namespace: "json"}`), pmlerr.NamespaceReserved)
	var n int
	wantLocal(t, p.execute(t, `return await mcp.cap.count_items({path: "a.json"})`), &n)
	if n != 2 {
		t.Fatalf("by its new name: %d", n)
	}
	wantLocal(t, p.execute(t, `return await mcp.cap.count_items_json_file({path: "b.json"})`), &n)
	if n != 1 {
		t.Fatalf("by its old name: %d", n)
	}
	wantLocal(t, p.execute(t, `return await mcp.cap.count_items_plus({path: "a.json"})`), &n)
	if n != 3 {
		t.Fatalf("the skill built on it: %d", n)
	}
	// Its old name may be taken back (renaming onto another skill may not).
	wantLocal(t, admin(`{action: "rename", target: "cap:count_items", new_action: "count_items_json_file"}`), nil)
	wantError(t, admin(`{action: "rename", target: "cap:count_items_json_file", new_action: "count_items_plus"}`), pmlerr.InvalidRequest, "already a capability")
	// Forgotten: gone by both names.
	wantLocal(t, admin(`{action: "forget", target: "cap:count_items"}`), nil)
	if a := p.execute(t, `return await mcp.cap.count_items({path: "a.json"})`); a.Status == wire.StatusSuccess {
		t.Fatalf("a forgotten skill ran: %+v", a)
	}
}

// A skill checks its arguments like a tool (issue 39 item 5): learned from
// runs on a.json and b.json, a misspelt field, an unknown one and none at
// all are refused with the declaration (never the first run's answer), and
// the next call is served; a skill built on a skill called by its qualified
// name lifts that call's arguments like any other.
func TestSkillChecksItsArguments(t *testing.T) {
	g := startGateway(t, gateway.Options{})
	ws := testfixture.Workspace(t, nil)
	testfixture.WriteFile(t, ws, ".pml.json", `{"version": "1", "permissions": {"allow": ["filesystem", "json", "acme.web.cap"]}}`)
	testfixture.WriteFile(t, ws, "a.json", `{"items": [1, 2]}`)
	testfixture.WriteFile(t, ws, "b.json", `{"items": [3]}`)
	testfixture.WriteFile(t, ws, "c.json", `{"items": [4, 5, 6]}`)
	p := startStdio(t, ws, gatewayEnv(g))
	const code = `const t = await mcp.filesystem.read_file({path: %q}); const d = await mcp.json.parse({data: t}); return d.items.length`
	var name string
	for _, path := range []string{"a.json", "b.json"} {
		a := p.executeReq(t, wire.ExecuteRequest{Code: sprintf(code, path), Intent: "read and parse a json file"})
		wantLocal(t, a, nil)
		name = a.Capability.Name
	}
	call := func(args string) wire.Answer {
		return p.execute(t, `return await mcp.`+strings.Replace(name, ":", ".", 1)+`(`+args+`)`)
	}
	for args, want := range map[string]string{
		`{file: "c.json"}`: `unknown field(s) "file"`,
		`{pth: "c.json"}`:  `did you mean "path"?`,
		`{}`:               `missing required field "path"`,
		`{path: 3}`:        `field "path"`,
	} {
		a := call(args)
		if a.Status != wire.StatusError || !strings.Contains(a.Error, want) || !strings.Contains(a.Error, "path: string") {
			t.Fatalf("%s: %+v", args, a)
		}
	}
	var n int
	wantLocal(t, call(`{path: "c.json"}`), &n)
	if n != 3 {
		t.Fatalf("c.json counted %d", n)
	}

	// A skill built on a skill called by its qualified name.
	inner := gatewaytest.Execute(t, g.Connect(t, g.Key, false), wire.ExecuteRequest{Code: `const p = await mcp.json.parse({data: "[1, 2]"}); return p.length + 100`})
	if inner.Capability == nil {
		t.Fatalf("the inner skill: %+v", inner)
	}
	_, action, _ := strings.Cut(inner.Capability.Name, ":")
	const outer = `const n = await mcp["acme.web.cap"].%s({data: %q}); return n * 2`
	var outerName string
	for _, data := range []string{"[1]", "[1, 2]"} {
		a := p.executeReq(t, wire.ExecuteRequest{Code: sprintf(strings.Replace(outer, "%s", action, 1), data), Intent: "double the count of a json list"})
		wantSuccess(t, a, nil)
		outerName = a.Capability.Name
	}
	// The package reports each run to be learned after answering it: the
	// second run's report, which makes data an input of its own, may land
	// after the answer.
	var d []wire.DiscoveredTool
	waitFor(t, 10*time.Second, "the skill built on a qualified call taking data", func() bool {
		d = p.discover(t, wire.DiscoverRequest{Name: outerName}).Tools
		return len(d) == 1 && strings.Contains(d[0].Declaration, "data: string")
	})
	var got int
	wantSuccess(t, p.execute(t, `return await mcp.`+strings.Replace(outerName, ":", ".", 1)+`({data: "[5, 6, 7]"})`), &got)
	if got != 2*(3+100) {
		t.Fatalf("with a new input: %d", got)
	}
}
