package e2e

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/testfixture"
	"github.com/pml-go/pml/internal/wire"
)

// End to end, the three routings of docs/architecture.md through the package:
// a Go SDK client spawns the real `pml stdio`, which talks to a real gateway
// on loopback.

// wantPackageHeaders checks every request the package made for the
// X-PML-Client header and the key (docs/protocol.md "Headers").
func wantPackageHeaders(t *testing.T, g *liveGateway) {
	t.Helper()
	reqs := g.rec.all()
	if len(reqs) == 0 {
		t.Fatal("the package made no request to the gateway")
	}
	for _, r := range reqs {
		if r.Client != "package" || !r.HasKey {
			t.Fatalf("request %+v lacks X-PML-Client: package or the key", r)
		}
	}
}

func callsTo(g *liveGateway) []string {
	var tools []string
	for _, r := range g.rec.toolCalls("call") {
		tools = append(tools, r.CallTool)
	}
	return tools
}

// Through the package, server-only code runs on the gateway.
func TestStdioServerOnlyRunsOnGateway(t *testing.T) {
	g := startGateway(t, gateway.Options{})
	p := startStdio(t, testfixture.Workspace(t, nil), gatewayEnv(g))

	a := p.execute(t, `const v = await mcp.json.parse({data: '{"n": 41}'}); return await mcp.math.add({a: v.n, b: 1});`)
	var n float64
	wantSuccess(t, a, &n)
	if n != 42 || a.ExecutedLocally == nil || *a.ExecutedLocally {
		t.Fatalf("want 42 run on the gateway, got %s executed_locally=%v", a.Result, a.ExecutedLocally)
	}
	if len(g.rec.executes()) != 1 || len(callsTo(g)) != 0 {
		t.Fatalf("want one execute and no call, got %+v", g.rec.all())
	}
	wantPackageHeaders(t, g)
}

// Client-only code comes back as execute_locally
// and runs in the package, reading this machine's workspace.
func TestStdioClientOnlyRunsLocally(t *testing.T) {
	g := startGateway(t, gateway.Options{})
	ws := testfixture.Workspace(t, nil)
	testfixture.WriteFile(t, ws, "notes/hello.txt", "only on this machine: "+ws)
	p := startStdio(t, ws, gatewayEnv(g))

	a := p.execute(t, `const text = await mcp.filesystem.read_file({path: "notes/hello.txt"});
		const entries = await mcp.filesystem.list_directory({path: "notes"});
		return {text, names: entries.map(e => e.name)};`)
	var res struct {
		Text  string   `json:"text"`
		Names []string `json:"names"`
	}
	wantLocal(t, a, &res)
	if res.Text != "only on this machine: "+ws || !slices.Equal(res.Names, []string{"hello.txt"}) {
		t.Fatalf("result %s", a.Result)
	}
	if !slices.Equal(toolsUsed(t, a), []string{"filesystem:list_directory", "filesystem:read_file"}) {
		t.Fatalf("tools_used %v", a.ToolsUsed)
	}
	if len(g.rec.executes()) != 1 || len(callsTo(g)) != 0 {
		t.Fatalf("want one execute (answered execute_locally) and no call, got %+v", g.rec.all())
	}
	wantPackageHeaders(t, g)
}

// In mixed code each call goes its own way (client
// tools here, server tools to the gateway's call) and the results combine.
func TestStdioMixedRoutesEachCall(t *testing.T) {
	g := startGateway(t, gateway.Options{})
	ws := testfixture.Workspace(t, nil)
	testfixture.WriteFile(t, ws, "data.json", `{"items": [3, 4, 5]}`)
	p := startStdio(t, ws, gatewayEnv(g))

	a := p.execute(t, `const content = await mcp.filesystem.read_file({path: "data.json"});
		const parsed = await mcp.json.parse({data: content});
		const sum = await mcp.math.add({a: parsed.items[0], b: parsed.items[2]});
		await mcp.filesystem.write_file({path: "out/sum.txt", content: String(sum)});
		return {count: parsed.items.length, sum, back: await mcp.filesystem.read_file({path: "out/sum.txt"})};`)
	var res struct {
		Count int     `json:"count"`
		Sum   float64 `json:"sum"`
		Back  string  `json:"back"`
	}
	wantLocal(t, a, &res)
	if res.Count != 3 || res.Sum != 8 || res.Back != "8" {
		t.Fatalf("result %s", a.Result)
	}
	if got := callsTo(g); !slices.Equal(got, []string{"json:parse", "math:add"}) {
		t.Fatalf("the gateway's call ran %v, want the two server tools", got)
	}
	wantPackageHeaders(t, g)
}

// A tool error reaches the code as an exception it can catch, and
// an uncaught one is TOOL_ERROR with the tool's message; the package keeps
// serving.
func TestStdioToolErrors(t *testing.T) {
	g := startGateway(t, gateway.Options{})
	p := startStdio(t, testfixture.Workspace(t, nil), gatewayEnv(g))

	a := p.execute(t, `try { await mcp.filesystem.read_file({path: "missing.txt"}); return "no"; }
		catch (e) { return "caught: " + e.message; }`)
	var msg string
	wantLocal(t, a, &msg)
	if len(msg) < len("caught: ") || msg[:8] != "caught: " {
		t.Fatalf("result %q", msg)
	}
	wantError(t, p.execute(t, `return await mcp.filesystem.read_file({path: "missing.txt"})`), "TOOL_ERROR", "missing.txt")
	wantError(t, p.execute(t, `return await mcp.filesystem.nope({})`), "UNKNOWN_TOOL")
	wantLocal(t, p.execute(t, `return await mcp.filesystem.list_directory({path: "."})`), nil)
}

// discover shows the AI client every tool it can call: the gateway's and
// this machine's, with TypeScript declarations.
func TestStdioDiscoverMergesLocalTools(t *testing.T) {
	g := startGateway(t, gateway.Options{})
	p := startStdio(t, testfixture.Workspace(t, nil), gatewayEnv(g))

	out := p.discover(t, discoverAll())
	routes := map[string]string{}
	for _, d := range out.Tools {
		routes[d.ID] = d.Routing
		if d.Declaration == "" {
			t.Fatalf("%s has no declaration", d.ID)
		}
	}
	for id, want := range map[string]string{"filesystem:read_file": "client", "shell:exec": "client", "json:parse": "server"} {
		if routes[id] != want {
			t.Fatalf("%s: routing %q, want %q (all: %v)", id, routes[id], want, routes)
		}
	}
	if len(g.rec.toolCalls("discover")) != 1 {
		t.Fatalf("discover was not forwarded: %+v", g.rec.all())
	}
	wantPackageHeaders(t, g)
}

// toolsUsed reads a success answer's tools_used, sorted.
func toolsUsed(t *testing.T, a wire.Answer) []string {
	t.Helper()
	b, _ := json.Marshal(a.ToolsUsed)
	var ids []string
	if err := json.Unmarshal(b, &ids); err != nil {
		t.Fatalf("tools_used %s: %v", b, err)
	}
	slices.Sort(ids)
	return ids
}
