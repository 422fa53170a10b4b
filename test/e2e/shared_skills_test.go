//go:build linux

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
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

// Shared skills across tenants (issue 34), each finding sent as an outsider
// would, with the next request served after it. Tenants: A = orga/proja,
// B = orgb/projb, both through real `pml stdio` packages on one gateway.
func TestSharedSkillsAcrossTenants(t *testing.T) {
	g := startGateway(t, gateway.Options{})
	keyA := g.NewKey(t, store.Scope{Org: "orga", Project: "proja"})
	keyB := g.NewKey(t, store.Scope{Org: "orgb", Project: "projb"})
	envFor := func(key string) []string { return []string{"PML_CLOUD_URL=" + g.URL, "PML_API_KEY=" + key} }

	wsA := testfixture.Workspace(t, nil)
	testfixture.WriteFile(t, wsA, ".env", "MY_TOKEN=secretvalue123\n")
	testfixture.WriteFile(t, wsA, "data.json", `{"secretvalue123": 2, "plain": 3}`)
	testfixture.WriteFile(t, wsA, "a.json", `{"items": [1, 2]}`)
	testfixture.WriteFile(t, wsA, "b.json", `{"items": [3]}`)
	pa := startStdio(t, wsA, envFor(keyA))
	adminA := g.Connect(t, keyA, false)

	// A client-routed skill of A's, learned from two runs through A's
	// package, then shared.
	const countCode = `const t = await mcp.filesystem.read_file({path: %q}); const d = await mcp.json.parse({data: t}); return d.items.length`
	for _, path := range []string{"a.json", "b.json"} {
		wantLocal(t, pa.executeReq(t, wire.ExecuteRequest{Code: sprintf(countCode, path), Intent: "count the items of a json file"}), nil)
	}
	count := waitCapability(t, g, store.Scope{Org: "orga", Project: "proja"}, "count_items_json_file")
	if count.Routing != "client" {
		t.Fatalf("A's skill routing %q", count.Routing)
	}
	adminOK(t, adminA, wire.AdminRequest{Action: "visibility", Target: count.ID, Visibility: "public"})

	// Finding 1: a .env value used as a key of data never reaches a
	// schema, A's own or what B sees.
	wantLocal(t, pa.executeReq(t, wire.ExecuteRequest{Intent: "double each value",
		Code: `const p = await mcp.json.parse({data: await mcp.filesystem.read_file({path: "data.json"})}); const o = {}; for (const k of Object.keys(p)) o[k] = p[k] * 2; return o`}), nil)
	doubled := waitCapability(t, g, store.Scope{Org: "orga", Project: "proja"}, "double_value")
	if strings.Contains(string(doubled.OutputSchema), "secretvalue") || strings.Contains(string(doubled.OutputSchema), "plain") {
		t.Fatalf("data keys in the output schema: %s", doubled.OutputSchema)
	}

	// Finding 3: renaming another skill onto the shared name is refused;
	// the next admin call is served.
	other := gatewaytest.Execute(t, adminA, wire.ExecuteRequest{Code: `const s = await mcp.json.parse({data: "[1]"}); return s.length + 1`, Intent: "something else"})
	if other.Capability == nil {
		t.Fatalf("A's second skill: %+v", other)
	}
	wantGatewayError(t, adminErr(t, adminA, wire.AdminRequest{Action: "rename", Target: other.Capability.ID, NewAction: count.Action}), pmlerr.InvalidRequest)
	adminOK(t, adminA, wire.AdminRequest{Action: "rename", Target: other.Capability.ID, NewAction: "something_renamed"})

	// Finding 2: a description of a megabyte is refused, an intent of one
	// is cut; both without control or bidi characters.
	huge := strings.Repeat("word ", 200_000)
	wantGatewayError(t, adminErr(t, adminA, wire.AdminRequest{Action: "describe", Target: other.Capability.ID, Description: &huge}), pmlerr.InvalidRequest)
	long := gatewaytest.Execute(t, adminA, wire.ExecuteRequest{Code: `const s = await mcp.json.parse({data: "[1, 2]"}); return s.length * 3`,
		Intent: "triple\u202e the length " + strings.Repeat("and more ", 100_000)})
	if long.Capability == nil {
		t.Fatalf("long intent: %+v", long)
	}
	stored, err := g.Service.Store().CapabilityByID(context.Background(), long.Capability.ID)
	if err != nil || len(stored.Description) > 1024 || strings.ContainsRune(stored.Description, '\u202e') {
		t.Fatalf("stored description %d bytes: %q (%v)", len(stored.Description), stored.Description[:min(60, len(stored.Description))], err)
	}

	// Finding 6: code with an e-mail address cannot be shared; the error
	// names the rule and the line, and the next request is served.
	mail := gatewaytest.Execute(t, adminA, wire.ExecuteRequest{Code: "const to = \"ceo@corp.example\";\nconst s = await mcp.json.parse({data: \"[1]\"});\nreturn to + s.length", Intent: "mail the ceo"})
	if mail.Capability == nil {
		t.Fatalf("A's mail skill: %+v", mail)
	}
	refused := adminErr(t, adminA, wire.AdminRequest{Action: "visibility", Target: mail.Capability.ID, Visibility: "public"})
	wantGatewayError(t, refused, pmlerr.InvalidRequest)
	if !strings.Contains(refused.Error, "an e-mail address") || !strings.Contains(refused.Error, "line 1 of the code") {
		t.Fatalf("share refusal: %+v", refused)
	}
	adminOK(t, adminA, wire.AdminRequest{Action: "visibility", Target: mail.Capability.ID, Visibility: "private"})

	// Finding 9: a report of code calling a tool that exists nowhere is not
	// learned; a report of code that could have run still is.
	post := func(code string) *http.Response {
		body, _ := json.Marshal(wire.LearnRequest{Code: code, Intent: "md5"})
		req, _ := http.NewRequest(http.MethodPost, g.URL+"/api/v1/capabilities", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+keyA)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	resp := post(`const h = await mcp.crypto.md5({data: "x"}); const j = await mcp.json.parse({data: "1"}); return h + j`)
	var answer wire.Answer
	_ = json.NewDecoder(resp.Body).Decode(&answer)
	if resp.StatusCode != http.StatusBadRequest || answer.ErrorCode != pmlerr.UnknownTool || !strings.Contains(answer.Error, "crypto:md5") {
		t.Fatalf("report with an unknown tool: %d %+v", resp.StatusCode, answer)
	}
	if resp := post(`const h = await mcp.crypto.sha256({data: "x"}); const j = await mcp.json.parse({data: "1"}); return h + j`); resp.StatusCode != http.StatusOK {
		t.Fatalf("report with known tools: %d", resp.StatusCode)
	}

	// Finding 5 and the useful half: B calls A's client-routed skill from
	// its package, with its own input only, on B's own file.
	wsB := testfixture.Workspace(t, nil)
	testfixture.WriteFile(t, wsB, ".pml.json", `{"version": "1", "permissions": {"allow": ["filesystem", "json", "string", "orga.proja.cap:*"]}}`)
	testfixture.WriteFile(t, wsB, "mine.json", `{"items": [7, 8, 9, 10]}`)
	pb := startStdio(t, wsB, envFor(keyB))
	var n int
	wantLocal(t, pb.execute(t, `return await mcp["orga.proja.cap"].`+count.Action+`({path: "mine.json"})`), &n)
	if n != 4 {
		t.Fatalf("B's call of A's skill counted %d", n)
	}

	// B uses A's slug skill with the one input that matters: the constants
	// that configure it (separator, replacement, a flag) stayed in its code.
	const slug = `const lower = await mcp.string.lower({ text: %q });
const trimmed = await mcp.string.trim({ text: lower });
return await mcp.string.replace({ text: trimmed, search: " ", replacement: "-", all: true });`
	for _, title := range []string{"Hello World Again", " Release Notes "} {
		if a := gatewaytest.Execute(t, adminA, wire.ExecuteRequest{Code: sprintf(slug, title), Intent: "Turn a title into a URL slug"}); a.Capability == nil {
			t.Fatalf("A's slug run: %+v", a)
		}
	}
	slugCap := waitCapability(t, g, store.Scope{Org: "orga", Project: "proja"}, "turn_title_url_slug")
	adminOK(t, adminA, wire.AdminRequest{Action: "visibility", Target: slugCap.ID, Visibility: "public"})
	var slugged string
	wantSuccess(t, pb.execute(t, `return await mcp["orga.proja.cap"].turn_title_url_slug({text: "Rocket Fuel"})`), &slugged)
	if slugged != "rocket-fuel" {
		t.Fatalf("B's slug: %q", slugged)
	}

	// B's discover: nothing of A's data, A's skill labelled as A's and
	// below B's own tools for the same words.
	hits := pb.discover(t, wire.DiscoverRequest{Query: "read a file", Limit: 10}).Tools
	if len(hits) == 0 || strings.Contains(hits[0].ID, ".") {
		t.Fatalf("another org's skill ranks first for B: %+v", hits)
	}
	for _, d := range pb.discover(t, discoverAll()).Tools {
		if strings.Contains(d.Declaration, "secretvalue") || strings.Contains(d.Description, "secretvalue") {
			t.Fatalf("B sees A's .env value: %+v", d)
		}
	}
}

func sprintf(format string, args ...any) string {
	b, _ := json.Marshal(args[0])
	return strings.Replace(format, "%q", string(b), 1)
}

// waitCapability waits (bounded) for scope's capability named action, which
// a package reports in the background.
func waitCapability(t *testing.T, g *liveGateway, scope store.Scope, action string) store.Capability {
	t.Helper()
	deadline := time.Now().Add(callTimeout)
	for {
		c, err := g.Service.Store().CapabilityByName(context.Background(), scope, "cap", action)
		if err == nil {
			return c
		}
		if time.Now().After(deadline) {
			caps, _, _ := g.Service.Store().ListCapabilities(context.Background(), store.CapabilityFilter{Viewer: scope})
			names := []string{}
			for _, c := range caps {
				names = append(names, c.Action)
			}
			t.Fatalf("no capability %s of %v: %v (have %v)", action, scope, err, names)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// What B approved of A's server-routed public skill is what B runs: the
// package pins it in its lockfile on first use, asks again (integrity) when
// A publishes new code under the name, and the gateway runs a pinned
// version only (issue 34 finding 4).
func TestApprovedVersionIsWhatRuns(t *testing.T) {
	g := startGateway(t, gateway.Options{})
	keyA := g.NewKey(t, store.Scope{Org: "orga", Project: "proja"})
	keyB := g.NewKey(t, store.Scope{Org: "orgb", Project: "projb"})
	a := g.Connect(t, keyA, false)
	first := gatewaytest.Execute(t, a, wire.ExecuteRequest{Code: `const p = await mcp.json.parse({data: "[1, 2]"}); return "v1:" + p.length`, Intent: "greet"})
	if first.Capability == nil {
		t.Fatalf("A's skill: %+v", first)
	}
	adminOK(t, a, wire.AdminRequest{Action: "visibility", Target: first.Capability.ID, Visibility: "public"})

	wsB := testfixture.Workspace(t, nil)
	testfixture.WriteFile(t, wsB, ".pml.json", `{"version": "1", "permissions": {"allow": ["json", "orga.proja.cap:*"]}}`)
	pb := startStdio(t, wsB, []string{"PML_CLOUD_URL=" + g.URL, "PML_API_KEY=" + keyB})
	const call = `return await mcp["orga.proja.cap"].greet({data: "[5]"})`
	var got string
	wantSuccess(t, pb.execute(t, call), &got)
	if got != "v1:1" {
		t.Fatalf("B's first call: %q", got)
	}

	// A publishes new code under the name (the intent evolved, same tools).
	second := gatewaytest.Execute(t, a, wire.ExecuteRequest{Code: `const p = await mcp.json.parse({data: "[1, 2, 3]"}); const n = p.length; return "v2:" + n`, Intent: "greet"})
	if second.Capability == nil || second.Capability.Name != "cap:greet" || second.Capability.FQDN == first.Capability.FQDN {
		t.Fatalf("A's new version: %+v", second.Capability)
	}
	adminOK(t, a, wire.AdminRequest{Action: "visibility", Target: second.Capability.ID, Visibility: "public"})
	ask := pb.execute(t, call)
	if ask.Status != wire.StatusApprovalRequired || ask.ApprovalType != "integrity" {
		t.Fatalf("B runs A's new code without a question: %+v %s", ask, ask.Result)
	}
	// Declined: nothing ran; the next request is served.
	wantError(t, pb.executeReq(t, wire.ExecuteRequest{ContinueWorkflow: &wire.ContinueWorkflow{WorkflowID: ask.WorkflowID, Approved: wire.Bool(false)}}),
		pmlerr.IntegrityError, "orga.proja.cap.greet")
	ask = pb.execute(t, call)
	yes := pb.executeReq(t, wire.ExecuteRequest{ContinueWorkflow: &wire.ContinueWorkflow{WorkflowID: ask.WorkflowID, Approved: wire.Bool(true)}})
	wantSuccess(t, yes, &got)
	if got != "v2:1" {
		t.Fatalf("after approving: %q", got)
	}

	// The gateway itself runs only the pinned version: a run pinned to the
	// old one (what a package checked just before A changed it) is refused.
	b := g.Connect(t, keyB, true)
	stale := gatewaytest.Execute(t, b, wire.ExecuteRequest{Code: call, Options: &wire.ExecuteOptions{Pins: map[string]string{"orga.proja.cap:greet": first.Capability.FQDN}}})
	if stale.Status != wire.StatusError || stale.ErrorCode != pmlerr.IntegrityError || !strings.Contains(stale.Error, "changed after it was approved") {
		t.Fatalf("a stale pin ran: %+v %s", stale, stale.Result)
	}
	wantSuccess(t, gatewaytest.Execute(t, b, wire.ExecuteRequest{Code: call, Options: &wire.ExecuteOptions{Pins: map[string]string{"orga.proja.cap:greet": second.Capability.FQDN}}}), &got)
}

// Two tenants on a real `pml gateway` process, each through its package
// (`pml exec`): A's skill, shared by A from code (mcp.pml.admin), is called
// by B with the one input that matters, on B's values; another project of
// A's org runs it by its bare name; a third org cannot reach it by a bare
// name (issue 34 item 4).
func TestSharedSkillOnARealGateway(t *testing.T) {
	gwDir := t.TempDir()
	url := startGatewayProcess(t, gwDir, nil)
	keyOf := func(org, project string) string {
		t.Helper()
		out, errOut, code := runPML(t, gwDir, nil, "", "gateway", "key", "create", "--db", "gw.db", "--org", org, "--project", project)
		if key := strings.TrimSpace(out); code == 0 && strings.HasPrefix(key, "pml_") {
			return key
		}
		t.Fatalf("pml gateway key create --org %s: exit %d\n%s\n%s", org, code, out, errOut)
		return ""
	}
	exec := func(key, code string) wire.Answer {
		t.Helper()
		out, errOut, _ := runPML(t, t.TempDir(), []string{"PML_CLOUD_URL=" + url, "PML_API_KEY=" + key}, "", "exec", "--approve", code)
		return execAnswer(t, out, errOut)
	}
	a, b, sibling := keyOf("orga", "proja"), keyOf("orgb", "projb"), keyOf("orga", "projc")
	const slug = `const lower = await mcp.string.lower({ text: %q });
const trimmed = await mcp.string.trim({ text: lower });
return await mcp.string.replace({ text: trimmed, search: " ", replacement: "-", all: true });`
	var name string
	for _, title := range []string{"Hello World Again", " Release Notes "} {
		ans := exec(a, sprintf(slug, title))
		if ans.Status != wire.StatusSuccess || ans.Capability == nil {
			t.Fatalf("A's run: %+v", ans)
		}
		name = ans.Capability.Name
	}
	_, action, _ := strings.Cut(name, ":")
	wantSuccess(t, exec(a, `return await mcp.pml.admin({action: "visibility", target: "`+name+`", visibility: "public"})`), nil)

	var got string
	wantSuccess(t, exec(b, `return await mcp["orga.proja.cap"].`+action+`({text: "Rocket Fuel"})`), &got)
	if got != "rocket-fuel" {
		t.Fatalf("B's call: %q", got)
	}
	// Without the input, a validation error naming it; the next call is served.
	wantError(t, exec(b, `return await mcp["orga.proja.cap"].`+action+`({})`), pmlerr.ToolError, "text")
	wantSuccess(t, exec(sibling, `return await mcp.cap.`+action+`({text: "Orga Sibling"})`), &got)
	if got != "orga-sibling" {
		t.Fatalf("the sibling project's call: %q", got)
	}
	if ans := exec(b, `return await mcp.cap.`+action+`({text: "x"})`); ans.Status == wire.StatusSuccess {
		t.Fatalf("another org reached A's skill by a bare name: %+v", ans)
	}
}
