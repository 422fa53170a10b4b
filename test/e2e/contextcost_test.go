//go:build linux

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/testfixture"
	"github.com/pml-go/pml/internal/wire"
)

// What the AI client pays in context for tools (README "Discover"): five
// real npm MCP servers behind `pml stdio` with the built-ins, against the
// same servers exposed to the client directly, over the public query set
// testdata/discover_queries.json.

// fiveServers are the mcpServers entries of the five npm servers, with
// their state (memory's graph, git's repository) kept inside ws.
func fiveServers(t testing.TB, ws string) map[string]any {
	t.Helper()
	memory := npmServer(t, "@modelcontextprotocol/server-memory/dist/index.js")
	memory["env"] = map[string]string{"MEMORY_FILE_PATH": ws + "/memory.jsonl"}
	return map[string]any{
		"everything": npmServer(t, "@modelcontextprotocol/server-everything/dist/index.js"),
		"filesystem": npmFilesystemServer(t, ws),
		"memory":     memory,
		"commands":   npmServer(t, "mcp-server-commands/build/index.js"),
		"git":        npmServer(t, "@cyanheads/git-mcp-server/dist/index.js"),
	}
}

// discoverQuery is one query of the set, as an AI client would phrase it,
// and the tools that would serve it.
type discoverQuery struct {
	Query string   `json:"query"`
	Tools []string `json:"tools"`
}

func loadQueries(t testing.TB) []discoverQuery {
	t.Helper()
	data, err := os.ReadFile("testdata/discover_queries.json")
	if err != nil {
		t.Fatal(err)
	}
	var qs []discoverQuery
	if err := json.Unmarshal(data, &qs); err != nil {
		t.Fatal(err)
	}
	return qs
}

// contextCost is what the test measures.
type contextCost struct {
	directTools, pmlTools  int
	directBytes, listBytes int
	discoverBytes          float64 // one top-5 discover, averaged over the queries
	recall, mrr            float64 // a right tool in the top 5; mean reciprocal rank
	queries                int
	misses                 []string
}

func (c contextCost) table() string {
	var b strings.Builder
	row := func(what string, bytes float64) {
		fmt.Fprintf(&b, "| %s | %.0f | %.0f |\n", what, bytes, bytes/4)
	}
	b.WriteString("| | bytes | ≈ tokens (bytes/4) |\n|---|---|---|\n")
	row(fmt.Sprintf("the five servers exposed directly (`tools/list` of each, %d tools)", c.directTools), float64(c.directBytes))
	row(fmt.Sprintf("`pml stdio`'s `tools/list` (%d tools behind it)", c.pmlTools), float64(c.listBytes))
	row("one top-5 `discover`, averaged over the query set", c.discoverBytes)
	total := float64(c.listBytes) + c.discoverBytes
	fmt.Fprintf(&b, "| pml, `tools/list` plus one top-5 `discover` | %.0f | %.0f (%.1f%% less than direct) |\n",
		total, total/4, 100*(1-total/float64(c.directBytes)))
	fmt.Fprintf(&b, "\nrecall@5 %.1f%%, MRR %.3f over %d queries\n", 100*c.recall, c.mrr, c.queries)
	return b.String()
}

func measureContextCost(t *testing.T) contextCost {
	ws := t.TempDir()
	servers := fiveServers(t, ws)
	if out, err := exec.Command("git", "-C", ws, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	testfixture.WriteConfig(t, ws, servers)
	var c contextCost
	ctx := context.Background()
	for name, s := range servers {
		entry := s.(map[string]any)
		cmd := exec.Command(entry["command"].(string), entry["args"].([]string)...)
		cmd.Dir = ws
		if env, ok := entry["env"].(map[string]string); ok {
			cmd.Env = os.Environ()
			for k, v := range env {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
		}
		session, err := mcp.NewClient(&mcp.Implementation{Name: "direct", Version: "0"}, nil).
			Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		list, err := session.ListTools(ctx, nil)
		_ = session.Close()
		if err != nil {
			t.Fatalf("%s tools/list: %v", name, err)
		}
		c.directTools += len(list.Tools)
		c.directBytes += jsonLen(t, list)
	}

	p := startStdio(t, ws, nil)
	list, err := p.session.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.listBytes = jsonLen(t, list)
	all := p.discover(t, discoverAll())
	c.pmlTools = len(all.Tools)
	known := map[string]bool{}
	for _, d := range all.Tools {
		known[d.ID] = true
	}

	queries := loadQueries(t)
	var totalBytes, found, rr float64
	for _, q := range queries {
		for _, id := range q.Tools {
			if !known[id] {
				t.Fatalf("query %q names %s, which pml does not list", q.Query, id)
			}
		}
		text := discoverText(t, p, wire.DiscoverRequest{Query: q.Query, Limit: 5})
		totalBytes += float64(len(text))
		var ans wire.DiscoverAnswer
		if err := json.Unmarshal([]byte(text), &ans); err != nil {
			t.Fatal(err)
		}
		rank := slices.IndexFunc(ans.Tools, func(d wire.DiscoveredTool) bool { return slices.Contains(q.Tools, d.ID) })
		if rank < 0 {
			var got []string
			for _, d := range ans.Tools {
				got = append(got, d.ID)
			}
			c.misses = append(c.misses, fmt.Sprintf("%q: want %v, got %v", q.Query, q.Tools, got))
			continue
		}
		found++
		rr += 1 / float64(rank+1)
	}
	c.queries = len(queries)
	n := float64(len(queries))
	c.discoverBytes, c.recall, c.mrr = totalBytes/n, found/n, rr/n
	sort.Strings(c.misses)
	return c
}

// discoverText is discover's answer as the AI client reads it.
func discoverText(t testing.TB, p *stdioPML, req wire.DiscoverRequest) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	res, err := p.session.CallTool(ctx, &mcp.CallToolParams{Name: "discover", Arguments: req})
	if err != nil || res.IsError || len(res.Content) != 1 {
		t.Fatalf("discover %+v: %v %+v", req, err, res)
	}
	return res.Content[0].(*mcp.TextContent).Text
}

func jsonLen(t testing.TB, v any) int {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return len(data)
}

// TestContextCost holds the targets of the README's "Discover" figures:
// tools/list plus one top-5 discover at most 1,000 tokens on average, a
// right tool in the top 5 for at least 95% of the queries, MRR at least 0.85.
func TestContextCost(t *testing.T) {
	if testing.Short() {
		t.Skip("starts five npm servers")
	}
	c := measureContextCost(t)
	t.Logf("\n%s", c.table())
	for _, m := range c.misses {
		t.Logf("miss: %s", m)
	}
	if tokens := (float64(c.listBytes) + c.discoverBytes) / 4; tokens > 1000 {
		t.Errorf("tools/list plus one top-5 discover: %.0f tokens, want at most 1,000", tokens)
	}
	if c.recall < 0.95 || c.mrr < 0.85 {
		t.Errorf("recall@5 %.3f (want ≥ 0.95), MRR %.3f (want ≥ 0.85)", c.recall, c.mrr)
	}
}

// Fewer round trips with real servers: a call to a tool that does not
// exist answers UNKNOWN_TOOL with the nearest tools declared, one whose
// arguments the server refuses answers the tool's declaration, and the
// corrected call then runs.
func TestErrorsDeclareToolsOfNpmServers(t *testing.T) {
	ws := t.TempDir()
	testfixture.WriteConfig(t, ws, fiveServers(t, ws))
	p := startStdio(t, ws, nil)

	a := p.execute(t, `return await mcp.memory.read_graf({})`)
	wantError(t, a, "UNKNOWN_TOOL", "memory:read_graph")
	if decls, _ := a.Details["declarations"].([]any); !slices.ContainsFunc(decls, func(d any) bool {
		s, _ := d.(string)
		return strings.HasPrefix(s, "mcp.memory.read_graph(")
	}) {
		t.Fatalf("declarations %#v in %+v", a.Details["declarations"], a)
	}

	a = p.execute(t, `return await mcp.memory.open_nodes({names: "Alice"})`)
	wantError(t, a, "TOOL_ERROR", "names")
	if decl, _ := a.Details["declaration"].(string); decl != "mcp.memory.open_nodes(args: { /** An array of entity names to retrieve */ names: string[] }): Promise<{ entities: object[]; relations: object[] }>" {
		t.Fatalf("declaration %q", a.Details["declaration"])
	}
	wantLocal(t, p.execute(t, `return await mcp.memory.open_nodes({names: ["Alice"]})`), nil)
}

// BenchmarkDiscoverFiveServers: one top-5 discover through `pml stdio` over
// the 100-odd tools of the five npm servers and the built-ins, cycling
// through the query set.
func BenchmarkDiscoverFiveServers(b *testing.B) {
	ws := b.TempDir()
	testfixture.WriteConfig(b, ws, fiveServers(b, ws))
	p := startStdio(b, ws, nil)
	queries := loadQueries(b)
	p.discover(b, discoverAll()) // start every server
	i := 0
	for b.Loop() {
		discoverText(b, p, wire.DiscoverRequest{Query: queries[i%len(queries)].Query, Limit: 5})
		i++
	}
}
