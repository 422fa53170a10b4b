//go:build linux

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/testfixture"
	"github.com/pml-go/pml/internal/wire"
)

// realGatewayOrgs is a `pml gateway` process and a way to make keys of its
// tenants and to run `pml exec` as one of them in a workspace.
type realGatewayOrgs struct {
	t    *testing.T
	dir  string
	url  string
	keys map[string]string
}

func startRealGatewayOrgs(t *testing.T) *realGatewayOrgs {
	t.Helper()
	dir := t.TempDir()
	return &realGatewayOrgs{t: t, dir: dir, url: startGatewayProcess(t, dir, nil), keys: map[string]string{}}
}

// key creates (once) the API key of org/project with `pml gateway key create`.
func (g *realGatewayOrgs) key(org, project string) string {
	g.t.Helper()
	if k, ok := g.keys[org+"/"+project]; ok {
		return k
	}
	out, errOut, code := runPML(g.t, g.dir, nil, "", "gateway", "key", "create", "--db", "gw.db", "--org", org, "--project", project)
	key := strings.TrimSpace(out)
	if code != 0 || !strings.HasPrefix(key, "pml_") {
		g.t.Fatalf("pml gateway key create --org %s: exit %d\n%s\n%s", org, code, out, errOut)
	}
	g.keys[org+"/"+project] = key
	return key
}

// exec runs `pml exec [flags] code` in the workspace ws with the key.
func (g *realGatewayOrgs) exec(ws, key, code string, flags ...string) (wire.Answer, int) {
	g.t.Helper()
	out, errOut, exit := runPML(g.t, ws, []string{"PML_CLOUD_URL=" + g.url, "PML_API_KEY=" + key}, "", append(append([]string{"exec"}, flags...), code)...)
	return execAnswer(g.t, out, errOut), exit
}

// current is the five-part name the registry serves for the four-part base,
// as the key sees it.
func (g *realGatewayOrgs) current(key, base string) string {
	g.t.Helper()
	resp, _ := gatewaytest.Do(g.t, http.MethodGet, g.url+"/mcp/"+base, key, nil, nil)
	if resp.StatusCode != http.StatusOK {
		g.t.Fatalf("GET /mcp/%s: HTTP %d", base, resp.StatusCode)
	}
	return strings.TrimPrefix(resp.Request.URL.Path, "/mcp/")
}

// learn runs code with the key and answers the capability the gateway
// kept it as.
func (g *realGatewayOrgs) learn(ws, key, code string) wire.CapabilityRef {
	g.t.Helper()
	ans, _ := g.exec(ws, key, code, "--approve")
	if ans.Status != wire.StatusSuccess || ans.Capability == nil {
		g.t.Fatalf("learning %q: %+v", code, ans)
	}
	return *ans.Capability
}

// A shared skill's inner skill is pinned with it (issue 39 item 1): beta
// approved acme's public outer skill, which calls acme's inner skill by its
// qualified name; acme forgets the inner skill and relearns other code under
// the same name; beta's next run of the unchanged outer skill asks again
// (an integrity approval naming the inner skill), a declined question runs
// nothing, and the gateway refuses a run pinned to the old inner version.
func TestNestedSkillIsPinned(t *testing.T) {
	g := startRealGatewayOrgs(t)
	acme, beta := g.key("acme", "web"), g.key("beta", "app")
	wsA, wsB := t.TempDir(), testfixture.Workspace(t, nil)
	testfixture.WriteFile(t, wsB, ".pml.json", `{"version": "1", "permissions": {"allow": ["acme.web.cap:*"]}}`)

	inner := g.learn(wsA, acme, `const p = await mcp.json.parse({data: "[1, 2]"}); return p.length + 100`)
	_, innerAction, _ := strings.Cut(inner.Name, ":")
	publish := func(name string) {
		t.Helper()
		ans, _ := g.exec(wsA, acme, `return await mcp.pml.admin({action: "visibility", target: "`+name+`", visibility: "public"})`, "--approve")
		wantSuccess(t, ans, nil)
	}
	publish(inner.Name)
	outer := g.learn(wsA, acme, `const n = await mcp["acme.web.cap"].`+innerAction+`({data: "[1, 2]"}); return n * 2`)
	publish(outer.Name)
	_, outerAction, _ := strings.Cut(outer.Name, ":")

	call := `return await mcp["acme.web.cap"].` + outerAction + `({data: "[1, 2]"})`
	var got float64
	ans, _ := g.exec(wsB, beta, call)
	wantSuccess(t, ans, &got)
	if got != 204 {
		t.Fatalf("beta's first run: %v", got)
	}
	lock, err := os.ReadFile(filepath.Join(wsB, ".pml", "mcp.lock"))
	if err != nil || !strings.Contains(string(lock), "acme.web.cap."+innerAction) {
		t.Fatalf("beta's lockfile does not hold the inner skill %s (%v):\n%s", innerAction, err, lock)
	}

	// acme forgets the inner skill and relearns it with other constants.
	ans, _ = g.exec(wsA, acme, `return await mcp.pml.admin({action: "forget", target: "`+inner.Name+`"})`, "--approve")
	wantSuccess(t, ans, nil)
	relearned := g.learn(wsA, acme, `const p = await mcp.json.parse({data: "[1, 2]"}); return p.length + 1000000`)
	publish(relearned.Name)
	current := g.current(beta, "acme.web.cap."+innerAction)
	if relearned.Name != inner.Name || current == inner.FQDN {
		t.Fatalf("relearned as %+v (%s), was %+v", relearned, current, inner)
	}

	ask, exit := g.exec(wsB, beta, call)
	if ask.Status != wire.StatusApprovalRequired || ask.ApprovalType != "integrity" || exit != 2 ||
		!strings.Contains(ask.Description, innerAction) {
		t.Fatalf("beta ran the relearned inner skill without a question (exit %d): %+v %s", exit, ask, ask.Result)
	}
	// Nothing ran, the lockfile still holds the approved version, and the
	// same question comes back.
	if again, _ := g.exec(wsB, beta, call); again.Status != wire.StatusApprovalRequired {
		t.Fatalf("the second try: %+v", again)
	}

	// A client that skips its package's check and sends the old pins is
	// refused by the gateway itself, and the next request is served.
	gw := &gatewaytest.Gateway{URL: g.url}
	s := gw.Connect(t, beta, true)
	pins := map[string]string{"acme.web.cap:" + outerAction: outer.FQDN, "acme.web.cap:" + innerAction: inner.FQDN}
	stale := gatewaytest.Execute(t, s, wire.ExecuteRequest{Code: call, Options: &wire.ExecuteOptions{Pins: pins}})
	wantError(t, stale, pmlerr.IntegrityError, innerAction, "changed after it was approved")
	pins["acme.web.cap:"+innerAction] = current
	wantSuccess(t, gatewaytest.Execute(t, s, wire.ExecuteRequest{Code: call, Options: &wire.ExecuteOptions{Pins: pins}}), &got)
	if got != 2*(2+1000000) {
		t.Fatalf("with the new pins: %v", got)
	}

	// Approved: the new inner version runs for beta.
	ans, _ = g.exec(wsB, beta, call, "--approve")
	wantSuccess(t, ans, &got)
	if got != 2*(2+1000000) {
		t.Fatalf("after approving: %v", got)
	}
}

// A client without a package approves another org's skill at the gateway
// (issue 39 item 2), on a real `pml gateway` process: its first run asks
// (approval_required, continued with continue_workflow, which the gateway
// holds), a decline runs nothing and is answered once, "continue" approves
// that run only, "always" keeps the version for the project, a new version
// asks again, the call tool refuses what is not approved, and the operator
// lists and revokes approvals with `pml gateway approvals`.
func TestPackagelessClientApprovesForeignSkills(t *testing.T) {
	g := startRealGatewayOrgs(t)
	acme, beta := g.key("acme", "web"), g.key("beta", "app")
	wsA := t.TempDir()
	code := func(n int) string {
		return fmt.Sprintf(`const p = await mcp.json.parse({data: "[1, 2]"}); return p.length + %d`, n)
	}
	skill := g.learn(wsA, acme, code(100))
	_, action, _ := strings.Cut(skill.Name, ":")
	publish := func() {
		t.Helper()
		ans, _ := g.exec(wsA, acme, `return await mcp.pml.admin({action: "visibility", target: "`+skill.Name+`", visibility: "public"})`, "--approve")
		wantSuccess(t, ans, nil)
	}
	publish()
	v1 := g.current(beta, "acme.web.cap."+action)

	s := (&gatewaytest.Gateway{URL: g.url}).Connect(t, beta, false) // no package
	call := `return await mcp["acme.web.cap"].` + action + `({data: "[1, 2, 3]"})`
	ask := func() wire.Answer {
		t.Helper()
		a := gatewaytest.Execute(t, s, wire.ExecuteRequest{Code: call})
		if a.Status != wire.StatusApprovalRequired || a.ApprovalType != "integrity" || a.WorkflowID == "" || !strings.Contains(a.Description, v1) {
			t.Fatalf("want a question about %s: %+v", v1, a)
		}
		return a
	}
	cont := func(id string, approved, always bool) wire.Answer {
		return gatewaytest.Execute(t, s, wire.ExecuteRequest{ContinueWorkflow: &wire.ContinueWorkflow{WorkflowID: id, Approved: &approved, Always: always}})
	}
	var got float64
	// Pins the client sends are no approval.
	spoof := gatewaytest.Execute(t, s, wire.ExecuteRequest{Code: call, Options: &wire.ExecuteOptions{Pins: map[string]string{"acme.web.cap:" + action: v1}}})
	if spoof.Status != wire.StatusApprovalRequired {
		t.Fatalf("pins sent by the client approved the run: %+v %s", spoof, spoof.Result)
	}
	// Declined: nothing ran; the same id is not pending any more.
	a := ask()
	if d := cont(a.WorkflowID, false, false); d.Status != wire.StatusAborted {
		t.Fatalf("declined: %+v", d)
	}
	wantError(t, cont(a.WorkflowID, true, false), pmlerr.WorkflowNotFound)
	// Another project cannot continue beta's workflow.
	other := (&gatewaytest.Gateway{URL: g.url}).Connect(t, g.key("beta", "other"), false)
	a = ask()
	wantError(t, gatewaytest.Execute(t, other, wire.ExecuteRequest{ContinueWorkflow: &wire.ContinueWorkflow{WorkflowID: a.WorkflowID, Approved: wire.Bool(true)}}), pmlerr.WorkflowNotFound)
	// Approved once: it runs, and the next run asks again.
	wantSuccess(t, cont(a.WorkflowID, true, false), &got)
	if got != 103 {
		t.Fatalf("approved run: %v", got)
	}
	a = ask()
	// The call tool has no workflow to ask in: refused.
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "call", Arguments: wire.CallRequest{Tool: "acme.web.cap:" + action, Args: json.RawMessage(`{"data": "[1]"}`)}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, string(pmlerr.PermissionDenied)) {
		t.Fatalf("call of an unapproved skill: %+v %v", res, err)
	}
	// Always: kept for this version.
	wantSuccess(t, cont(a.WorkflowID, true, true), &got)
	wantSuccess(t, gatewaytest.Execute(t, s, wire.ExecuteRequest{Code: call}), &got)
	out, errOut, exit := runPML(t, g.dir, nil, "", "gateway", "approvals", "list", "--db", "gw.db", "--org", "beta", "--project", "app")
	if exit != 0 || !strings.Contains(out, v1) {
		t.Fatalf("approvals list: exit %d\n%s\n%s", exit, out, errOut)
	}

	// A new version under the name asks again.
	ans, _ := g.exec(wsA, acme, `return await mcp.pml.admin({action: "forget", target: "`+skill.Name+`"})`, "--approve")
	wantSuccess(t, ans, nil)
	g.learn(wsA, acme, code(1000000))
	publish()
	v2 := g.current(beta, "acme.web.cap."+action)
	if v2 == v1 {
		t.Fatalf("the relearned skill is the same version %s", v2)
	}
	a = gatewaytest.Execute(t, s, wire.ExecuteRequest{Code: call})
	if a.Status != wire.StatusApprovalRequired || !strings.Contains(a.Description, v2) {
		t.Fatalf("a new version ran without a question: %+v %s", a, a.Result)
	}
	wantSuccess(t, cont(a.WorkflowID, true, true), &got)
	if got != 3+1000000 {
		t.Fatalf("the new version: %v", got)
	}

	// Revoked by the operator: asks again; a bad FQDN is a usage error.
	if out, errOut, exit := runPML(t, g.dir, nil, "", "gateway", "approvals", "revoke", "--db", "gw.db", "--org", "beta", "--project", "app", v2); exit != 0 {
		t.Fatalf("revoke: exit %d\n%s\n%s", exit, out, errOut)
	}
	if _, _, exit := runPML(t, g.dir, nil, "", "gateway", "approvals", "revoke", "--db", "gw.db", "--org", "beta", "--project", "app", "not-a-name"); exit == 0 {
		t.Fatal("revoking a bad name succeeded")
	}
	ask2 := gatewaytest.Execute(t, s, wire.ExecuteRequest{Code: call})
	if ask2.Status != wire.StatusApprovalRequired {
		t.Fatalf("after the revoke: %+v", ask2)
	}
	// The next request is served.
	wantSuccess(t, gatewaytest.Execute(t, s, wire.ExecuteRequest{Code: `return await mcp.json.parse({data: "[1]"})`}), nil)
}
