//go:build linux

package e2e

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/testfixture"
	"github.com/pml-go/pml/internal/tools"
	"github.com/pml-go/pml/internal/wire"
)

// globalPair is code using a pair of built-ins, json:parse then math:add
// fed by its result: the edge the global graph learns.
const globalPair = `const p = await mcp.json.parse({data: '{"a": 2, "b": 3}'}); return await mcp.math.add({a: p.a, b: p.b})`

// The global layer with a real `pml gateway` process (docs/how-it-works.md
// "The global layer"): tenants of distinct orgs run code through `pml exec`
// against it; a fourth org with no history of its own sees the edge in
// discover's graph, ranks math:add after a query that finds json:parse, and
// sees json:parse's result type inferred from the others' calls, only once
// three orgs ran the pair: not after two, nor after an opted-out one.
func TestGlobalLayerReachesANewTenant(t *testing.T) {
	gwDir := t.TempDir()
	testfixture.WriteFile(t, gwDir, "gw.json", `{"global": {"opt_out": ["quiet"]}}`)
	_, errOut, code := runPML(t, gwDir, nil, "", "gateway", "--global-k", "1", "--db", "refused.db", "--addr", "127.0.0.1:0", "--metrics-addr", "off")
	if code == 0 || !strings.Contains(errOut, "global: k 1") {
		t.Fatalf("pml gateway --global-k 1: exit %d\n%s", code, errOut)
	}
	url := startGatewayProcess(t, gwDir, nil, "--config", "gw.json")
	keyOf := func(org string) string {
		t.Helper()
		out, errOut, code := runPML(t, gwDir, nil, "", "gateway", "key", "create", "--db", "gw.db", "--org", org, "--project", "web")
		if key := strings.TrimSpace(out); code == 0 && strings.HasPrefix(key, "pml_") {
			return key
		}
		t.Fatalf("pml gateway key create --org %s: exit %d\n%s\n%s", org, code, out, errOut)
		return ""
	}
	runPair := func(key string) {
		t.Helper()
		out, errOut, code := runPML(t, t.TempDir(), []string{"PML_CLOUD_URL=" + url, "PML_API_KEY=" + key}, "", "exec", globalPair)
		var sum int
		if wantSuccess(t, execAnswer(t, out, errOut), &sum); code != 0 || sum != 5 {
			t.Fatalf("pml exec: exit %d, sum %d\n%s", code, sum, errOut)
		}
	}
	gw := &gatewaytest.Gateway{URL: url}
	newcomerKey := keyOf("newcomer")
	newcomer := gw.Connect(t, newcomerKey, false)

	second := keyOf("second")
	for _, key := range []string{keyOf("quiet"), keyOf("first"), second} {
		runPair(key)
	}
	// Learning writes the graph about 5 s after the runs. Once the second
	// org sees the edge in its own graph, the global layer was read after
	// it (docs/how-it-works.md "The global layer").
	secondSession := gw.Connect(t, second, false)
	poll(t, 30*time.Second, "the second org's own graph", func() bool {
		return hasEdge(gatewayDiscover(t, secondSession, wire.DiscoverRequest{Query: "parse json", Graph: true}).Graph)
	})
	if d := gatewayDiscover(t, newcomer, wire.DiscoverRequest{Query: "parse json", Graph: true}); hasEdge(d.Graph) || hasTool(d.Tools, "math:add") {
		t.Fatalf("two orgs (and an opted-out one) ran the pair; the newcomer's discover: graph %v, tools %v", d.Graph, toolIDs(d.Tools))
	}
	if d := gatewayDiscover(t, newcomer, wire.DiscoverRequest{Name: "json:parse"}); d.Tools[0].OutputInferred {
		t.Fatalf("two orgs' result types reached the newcomer: %+v", d.Tools[0])
	}

	runPair(keyOf("third"))
	var d wire.DiscoverAnswer
	poll(t, 30*time.Second, "the global graph to reach the newcomer", func() bool {
		d = gatewayDiscover(t, newcomer, wire.DiscoverRequest{Query: "parse json", Graph: true})
		return hasEdge(d.Graph)
	})
	// Its count is the global graph's share as N = 10 runs of the
	// newcomer's (no history of its own), whatever the others' runs.
	if next := d.Graph["json:parse"]; next[0].Count != 10 || !hasTool(d.Tools, "math:add") {
		t.Fatalf("the newcomer's discover: graph %v, tools %v", d.Graph, toolIDs(d.Tools))
	}
	// json:parse declares no result type: the others' calls type it.
	parse := gatewayDiscover(t, newcomer, wire.DiscoverRequest{Name: "json:parse"}).Tools[0]
	if !parse.OutputInferred || !strings.HasSuffix(parse.Declaration, "Promise<{ a?: number; b?: number }>"+tools.InferredNote) {
		t.Fatalf("json:parse for the newcomer: %+v", parse)
	}

	// Through its package (`pml stdio`), the newcomer's AI client gets the
	// same lift: math:add among the hits of a query that finds json:parse.
	ws := testfixture.Workspace(t, map[string]any{"fx": map[string]any{"command": testfixture.BuildServer(t)}})
	p := startStdio(t, ws, []string{"PML_CLOUD_URL=" + url, "PML_API_KEY=" + newcomerKey})
	if hits := p.discover(t, wire.DiscoverRequest{Query: "parse json", Limit: 20}).Tools; !hasTool(hits, "math:add") {
		t.Fatalf("the newcomer's package: %v", toolIDs(hits))
	}
	// A tool of its own server without an output schema is typed by its
	// own first successful call, marked inferred.
	var got map[string]any
	wantLocal(t, p.execute(t, `return await mcp.fx.json({})`), &got)
	poll(t, 30*time.Second, "fx:json typed from the call", func() bool {
		fx := p.discover(t, wire.DiscoverRequest{Name: "fx:json"}).Tools
		return len(fx) == 1 && fx[0].OutputInferred &&
			strings.HasSuffix(fx[0].Declaration, "Promise<{ items?: string[]; n?: number; ok?: boolean }>"+tools.InferredNote)
	})
}

func hasEdge(g map[string][]wire.Neighbor) bool {
	return slices.ContainsFunc(g["json:parse"], func(n wire.Neighbor) bool { return n.Tool == "math:add" })
}

func hasTool(list []wire.DiscoveredTool, id string) bool {
	return slices.ContainsFunc(list, func(d wire.DiscoveredTool) bool { return d.ID == id })
}

func toolIDs(list []wire.DiscoveredTool) []string {
	out := make([]string, 0, len(list))
	for _, d := range list {
		out = append(out, d.ID)
	}
	return out
}

// gatewayDiscover calls the gateway's own discover tool.
func gatewayDiscover(t *testing.T, s *mcp.ClientSession, req wire.DiscoverRequest) wire.DiscoverAnswer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "discover", Arguments: req})
	if err != nil || res.IsError || len(res.Content) != 1 {
		t.Fatalf("discover: %v %+v", err, res)
	}
	var out wire.DiscoverAnswer
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// poll checks cond every 100 ms until it holds, failing t after d.
func poll(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %s: no %s", d, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
