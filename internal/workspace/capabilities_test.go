package workspace

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/gatewayclient"
	"github.com/pml-go/pml/internal/lockfile"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/wire"
)

const readCap = `const text = await mcp.filesystem.read_file({ path: args.path }); return text.toUpperCase();`

// capEnv is a package on an in-process gateway, allowed to read files and
// call capabilities, with a file to read.
func capEnv(t *testing.T) *approvalEnv {
	t.Helper()
	e := newApprovalEnv(t, `{"permissions": {"allow": ["filesystem", "cap", "json"]}}`, nil)
	if err := os.WriteFile(filepath.Join(e.ws, "note.txt"), []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *approvalEnv) service() *gateway.Service { return e.pkg.gw.(*gatewayclient.InProcess).Service }

func (e *approvalEnv) learnLocal(code, intent string) *wire.CapabilityRef {
	e.t.Helper()
	ref, err := e.service().LearnLocal(context.Background(), gateway.Caller{Scope: gateway.LocalScope, IsPackage: true}, wire.LearnRequest{Code: code, Intent: intent})
	if err != nil || ref == nil {
		e.t.Fatalf("learn %q: %+v %v", intent, ref, err)
	}
	return ref
}

// A client capability called from local code is fetched, locked and run
// nested with its args; its own calls run here.
func TestLocalCapabilityRunsNested(t *testing.T) {
	e := capEnv(t)
	ref := e.learnLocal(readCap, "shout a file")
	a := e.exec(`const s = await mcp.cap.shout_file({ path: "note.txt" }); return s + "!";`)
	wantStatus(t, a, wire.StatusSuccess)
	if string(a.Result) != `"HELLO!"` || a.ExecutedLocally == nil || !*a.ExecutedLocally {
		t.Fatalf("%+v", a)
	}
	lf, err := lockfile.Open(e.ws, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := lf.Get(ref.FQDN)
	if !ok || got.Type != "code" || got.Routing != "client" {
		t.Fatalf("lockfile entry for %s: %+v", ref.FQDN, got)
	}
	// A failure inside it is a catchable TOOL_ERROR of the caller.
	a = e.exec(`try { await mcp.cap.shout_file({ path: "missing.txt" }) } catch (err) { return err.code }`)
	wantStatus(t, a, wire.StatusSuccess)
	if string(a.Result) != `"TOOL_ERROR"` {
		t.Fatalf("%s", a.Result)
	}
	// An unknown capability is UNKNOWN_TOOL, and the package serves on.
	a = e.exec(`return await mcp.cap.nothing_like_it({})`)
	if a.ErrorCode != pmlerr.UnknownTool {
		t.Fatalf("unknown capability: %+v", a)
	}
	wantStatus(t, e.exec(`return await mcp.cap.shout_file({ path: "note.txt" })`), wire.StatusSuccess)
}

// A server capability called from local code runs on the gateway.
func TestLocalCodeCallsServerCapability(t *testing.T) {
	e := capEnv(t)
	a := e.service().Execute(context.Background(), gateway.Caller{Scope: gateway.LocalScope},
		wire.ExecuteRequest{Code: `const v = await mcp.json.parse({ data: args.json ?? "[1,2]" }); return v`, Intent: "parse the json"})
	if a.Capability == nil || a.Capability.Name != "cap:parse_json" {
		t.Fatalf("%+v", a)
	}
	a = e.exec(`const t = await mcp.filesystem.read_file({ path: "note.txt" }); return await mcp.cap.parse_json({ json: JSON.stringify(t) });`)
	wantStatus(t, a, wire.StatusSuccess)
	if string(a.Result) != `"hello"` {
		t.Fatalf("%s", a.Result)
	}
}

// A capability whose code changed since it was locked needs an integrity
// approval; rejecting is INTEGRITY_ERROR, approving updates the lockfile.
func TestLocalCapabilityIntegrity(t *testing.T) {
	e := capEnv(t)
	e.learnLocal(readCap, "shout a file")
	code := `return await mcp.cap.shout_file({ path: "note.txt" })`
	wantStatus(t, e.exec(code), wire.StatusSuccess)
	for i, approve := range []bool{false, true} {
		// A new version of the same capability (same name, code of another shape).
		e.learnLocal(readCap+strings.Repeat(" void 0;", i+1), "shout a file")
		r, approved := e.integrityRound(code, "local.default.cap.shout_file", approve)
		if !approved {
			continue
		}
		wantStatus(t, r, wire.StatusSuccess)
		if string(r.Result) != `"HELLO"` {
			t.Fatalf("%s", r.Result)
		}
		wantStatus(t, e.exec(code), wire.StatusSuccess) // locked at the new version
	}
}

func TestLearnLocal(t *testing.T) {
	e := capEnv(t)
	code := `return (await mcp.filesystem.list_directory({ path: "." })).length`
	an, err := e.pkg.analyzer.Analyze(code)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := e.pkg.learnLocal(context.Background(), wire.LearnRequest{Code: code, Intent: "count entries"}, an)
	if err != nil || ref == nil || ref.Name != "cap:count_entries" || !strings.HasPrefix(ref.FQDN, "local.default.cap.count_entries.") {
		t.Fatalf("%+v %v", ref, err)
	}
	if again, err := e.pkg.learnLocal(context.Background(), wire.LearnRequest{Code: code}, an); err != nil || again == nil || again.ID != ref.ID {
		t.Fatalf("same code again: %+v %v", again, err)
	}
	// Code the gateway does not learn (one direct call) is answered, not failed.
	direct := `return await mcp.filesystem.list_directory({ path: "." })`
	dan, _ := e.pkg.analyzer.Analyze(direct)
	if ref, err := e.pkg.learnLocal(context.Background(), wire.LearnRequest{Code: direct}, dan); ref != nil || err != nil {
		t.Fatalf("direct call: %+v %v", ref, err)
	}
	// A report the gateway refuses is no capability, and an error.
	bad, _ := e.pkg.analyzer.Analyze("return 1")
	if ref, err := e.pkg.learnLocal(context.Background(), wire.LearnRequest{Code: "return (", Intent: "broken"}, bad); ref != nil || err == nil {
		t.Fatalf("%+v %v", ref, err)
	}
}

// learnCounter is a gateway that counts the package's learn reports and
// fails the first fail of them.
type learnCounter struct {
	*gatewayclient.InProcess
	mu      sync.Mutex
	reports int
	fail    int
}

func (g *learnCounter) LearnCapability(ctx context.Context, req wire.LearnRequest) (*wire.CapabilityRef, error) {
	g.mu.Lock()
	g.reports++
	n := g.reports
	g.mu.Unlock()
	if n <= g.fail {
		return nil, pmlerr.New(pmlerr.NetworkError, "gateway down for this report")
	}
	return g.InProcess.LearnCapability(ctx, req)
}

func (g *learnCounter) count() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.reports
}

// A run is reported for learning once per session and code, including code
// the gateway answers but does not save (one direct call, the common hybrid
// case: it was reported again on every run, a request and a gateway write
// each); a report that failed is made again at the next run.
func TestLearnReportedOncePerCode(t *testing.T) {
	e := capEnv(t)
	gw := &learnCounter{InProcess: e.pkg.gw.(*gatewayclient.InProcess), fail: 1}
	pkg, err := New(Options{Workspace: e.ws, Gateway: gw})
	if err != nil {
		t.Fatal(err)
	}
	defer pkg.Close()
	run := func(code string) {
		t.Helper()
		if a := pkg.Execute(context.Background(), wire.ExecuteRequest{Code: code}); a.Status != wire.StatusSuccess {
			t.Fatalf("%s: %s %s", code, a.Status, a.Error)
		}
		pkg.learning.Wait()
	}
	direct := `return await mcp.filesystem.read_file({ path: "note.txt" })`
	run(direct) // reported, and the report fails
	run(direct) // reported again: the gateway answers that it does not save it
	if n := gw.count(); n != 2 {
		t.Fatalf("%d reports after a failed one and a retry, want 2", n)
	}
	for range 3 {
		run(direct)
	}
	if n := gw.count(); n != 2 {
		t.Fatalf("%d reports of the same unsaved code, want 2", n)
	}
	run(`const text = await mcp.filesystem.read_file({ path: "note.txt" }); return text.length`)
	if n := gw.count(); n != 3 {
		t.Fatalf("%d reports after other code, want 3", n)
	}
}

// admin has one path and one rule (issue 39 item 3): the AI client's direct
// call is refused, and the next request is served; from code, reading asks
// nothing, bad arguments are refused before anyone is asked, and a change
// others can see asks the person for that one call.
func TestPackageAdminTool(t *testing.T) {
	e := capEnv(t)
	ref := e.learnLocal(readCap, "shout a file")
	ctx := context.Background()
	s := connectInMemory(t, e.pkg.NewMCPServer(), nil)
	list, err := s.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
		if tl.Name == "discover" && !strings.Contains(tl.Description, "mcp.pml.admin") {
			t.Fatalf("discover's description does not tell of admin: %q", tl.Description)
		}
	}
	if slices.Contains(names, "admin") || !slices.Contains(names, "execute") || !slices.Contains(names, "discover") {
		t.Fatalf("tools/list %v", names)
	}
	for _, args := range []map[string]any{
		{"action": "visibility", "target": ref.ID, "visibility": "public"},
		{"action": "rename", "target": ref.ID, "new_action": "shout"},
		{"action": "forget", "target": ref.ID},
	} {
		res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "admin", Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		var out map[string]any
		_ = json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &out)
		if !res.IsError || out["error_code"] != string(pmlerr.PermissionDenied) || !strings.Contains(out["error"].(string), "mcp.pml.admin") {
			t.Fatalf("direct admin %v: %v", args, out)
		}
	}
	if cp, err := e.service().Store().CapabilityByID(ctx, ref.ID); err != nil || cp.Visibility != store.VisibilityPrivate || cp.Action != "shout_file" {
		t.Fatalf("after the refused direct calls: %+v %v", cp, err)
	}

	// Reading asks nothing.
	for _, read := range []string{`{action: "show", target: "cap:shout_file"}`, `{action: "list"}`, `{action: "describe", target: "cap:shout_file"}`} {
		a := e.exec(`return await mcp.pml.admin(` + read + `)`)
		wantStatus(t, a, wire.StatusSuccess)
		if !strings.Contains(string(a.Result), `"name":"cap:shout_file"`) {
			t.Fatalf("%s: %s", read, a.Result)
		}
	}
	// Bad arguments: refused before anyone is asked.
	for read, code := range map[string]pmlerr.Code{
		`{action: "visibility", target: "cap:shout_file", visibility: "everyone"}`: pmlerr.InvalidRequest,
		`{action: "publish", target: "cap:shout_file"}`:                            pmlerr.InvalidRequest,
		`{action: "rename", target: "cap:shout_file"}`:                             pmlerr.InvalidRequest,
		`{action: "forget"}`: pmlerr.InvalidRequest,
	} {
		a := e.exec(`return await mcp.pml.admin(` + read + `)`)
		if a.Status != wire.StatusError || !strings.Contains(a.Error, string(code)) && a.ErrorCode != code {
			t.Fatalf("%s: %+v", read, a)
		}
	}
	// A change asks, for that one call, saying what it does.
	a := e.exec(`return await mcp.pml.admin({action: "rename", target: "cap:shout_file", new_namespace: "text", new_action: "shout"})`)
	if a.Status != wire.StatusApprovalRequired || !strings.Contains(a.Description, "pml:admin") || !strings.Contains(a.Description, "renames cap:shout_file to text:shout") {
		t.Fatalf("rename from code: %+v", a)
	}
	wantStatus(t, e.cont(a.WorkflowID, true), wire.StatusSuccess)
	a = e.exec(`return await mcp.text.shout({ path: "note.txt" })`)
	if a.Status == wire.StatusApprovalRequired { // "text" is not in the allow list
		a = e.cont(a.WorkflowID, true)
	}
	wantStatus(t, a, wire.StatusSuccess)
	if string(a.Result) != `"HELLO"` {
		t.Fatalf("%s", a.Result)
	}
	// Into a tool namespace: asked, approved, refused by the gateway.
	a = e.exec(`return await mcp.pml.admin({action: "rename", target: "text:shout", new_namespace: "filesystem"})`)
	a = e.cont(a.WorkflowID, true)
	if a.Status != wire.StatusError || !strings.Contains(a.Error, string(pmlerr.NamespaceReserved)) && a.ErrorCode != pmlerr.NamespaceReserved {
		t.Fatalf("rename into a tool namespace: %+v", a)
	}
}

// The remote gateway client: admin, capability reports and the registry.
func TestRemoteCapabilityEndpoints(t *testing.T) {
	g := gatewaytest.Start(t, gateway.Options{})
	r := gatewayclient.NewRemote(g.URL, g.Key, t.TempDir())
	defer r.Close()
	ctx := context.Background()
	ref, err := r.LearnCapability(ctx, wire.LearnRequest{Code: "const s = await mcp.math.add({a: 1, b: args.n ?? 1}); return s", Intent: "add a number"})
	if err != nil || ref == nil || ref.Name != "cap:add_number" || !strings.HasPrefix(ref.FQDN, "acme.web.cap.add_number.") {
		t.Fatalf("learn: %+v %v", ref, err)
	}
	if _, err := r.LearnCapability(ctx, wire.LearnRequest{Code: "return (", Intent: "broken"}); err == nil {
		t.Fatal("learn broken code: want error")
	}
	out, err := r.Admin(ctx, json.RawMessage(`{"action":"visibility","target":"`+ref.FQDN+`","visibility":"org"}`))
	if err != nil || !strings.Contains(string(out), `"visibility":"org"`) {
		t.Fatalf("admin: %s %v", out, err)
	}
	if _, err := r.Admin(ctx, json.RawMessage(`{"action":"visibility","target":"nope","visibility":"org"}`)); pmlerr.CodeOf(err, "") != pmlerr.UnknownTool {
		t.Fatalf("admin unknown target: %v", err)
	}
	reg := r.Registry()
	first, err := reg.Fetch(ctx, ref.FQDN)
	if err != nil || !strings.Contains(string(first.Body), "args.n") {
		t.Fatalf("fetch: %+v %v", first, err)
	}
	if again, err := reg.Fetch(ctx, ref.FQDN); err != nil || !again.Revalidated {
		t.Fatalf("refetch: %+v %v", again, err)
	}
	v, err := r.Call(ctx, wire.CallRequest{Tool: "cap:add_number", Args: json.RawMessage(`{"n": 41}`)})
	if err != nil || string(v) != "42" {
		t.Fatalf("call: %s %v", v, err)
	}
}

// Code holding a value of the workspace .env, or the package's own key, is
// not learned; the check follows a .env edit (its filters are cached and
// rebuilt when the values change).
func TestHoldsSecretFollowsDotEnv(t *testing.T) {
	const key = "pml_test_key_0123456789abcdef"
	t.Setenv("PML_API_KEY", key)
	e := capEnv(t)
	const first, second = "first-value-7f3a9c2e", "second-value-b81d44e0"
	writeDotEnv := func(v string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(e.ws, ".env"), []byte("TOKEN="+v+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := e.pkg.env.Reload(); err != nil {
			t.Fatal(err)
		}
	}
	code := func(v string) string { return `return await mcp.filesystem.read_file({ path: "` + v + `" })` }
	if e.pkg.holdsSecret(code(first), "") {
		t.Fatal("no .env yet: nothing to hold")
	}
	writeDotEnv(first)
	if !e.pkg.holdsSecret(code(first), "") || !e.pkg.holdsSecret("return 1", "read "+first) {
		t.Fatal("a .env value in the code or the intent is a secret")
	}
	writeDotEnv(second)
	if e.pkg.holdsSecret(code(first), "") || !e.pkg.holdsSecret(code(second), "") {
		t.Fatal("after a .env edit, its new value is the secret, not the old one")
	}
	if !e.pkg.holdsSecret(code(key), "") {
		t.Fatal("the package's own key is a secret")
	}
	if e.pkg.noLearn(wire.ExecuteRequest{Code: code(second)}).Options.Learns() {
		t.Fatal("code holding a .env value is sent with learn: false")
	}
	if req := e.pkg.noLearn(wire.ExecuteRequest{Code: code("note.txt")}); req.Options != nil {
		t.Fatalf("code without a secret is sent as it is: %+v", req.Options)
	}
}

// A client capability learned from two local runs reads its input from
// args: called here with a new path it reads that file, with none it
// repeats the first run, and arguments that do not match its schema are a
// validation error with its declaration, after which the next call runs.
func TestLocalCapabilityTakesItsInputs(t *testing.T) {
	e := capEnv(t)
	if err := os.WriteFile(filepath.Join(e.ws, "other.txt"), []byte("world"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := `const text = await mcp.filesystem.read_file({ path: %q }); return text.toUpperCase() + "!";`
	e.learnLocal(strings.Replace(run, "%q", `"note.txt"`, 1), "shout one file")
	e.learnLocal(strings.Replace(run, "%q", `"other.txt"`, 1), "shout one file")
	e.service().Learner().Wait()
	a := e.exec(`return [await mcp.cap.shout_file({ path: "other.txt" }), await mcp.cap.shout_file({ path: "note.txt" })]`)
	wantStatus(t, a, wire.StatusSuccess)
	if string(a.Result) != `["WORLD!","HELLO!"]` {
		t.Fatalf("%s", a.Result)
	}
	// A past run's value is never a silent default.
	for _, args := range []string{`{ path: ["note.txt"] }`, ``, `{}`} {
		bad := e.exec(`return await mcp.cap.shout_file(` + args + `)`)
		if bad.Status != wire.StatusError || bad.ErrorCode != pmlerr.ToolError ||
			!strings.Contains(bad.Error, "invalid arguments") || !strings.Contains(bad.Error, "mcp.cap.shout_file(args: {") {
			t.Fatalf("arguments %s: %+v", args, bad)
		}
	}
	wantStatus(t, e.exec(`return await mcp.cap.shout_file({ path: "note.txt" })`), wire.StatusSuccess)
}
