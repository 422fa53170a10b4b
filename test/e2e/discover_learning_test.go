//go:build linux

package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/testfixture"
	"github.com/pml-go/pml/internal/wire"
)

// Does learning make finding better, on tasks written by others, held out
// (docs/performance.md "Discover learns from use")? 5-fold cross-validation
// on a real `pml gateway` whose hosted servers are the set's: in each fold
// three orgs run the other folds' tasks (each task's tools called in order,
// its text as the intent), then a fourth org with no history of its own
// ("others": what the global layer carries) and one of the three ("own":
// its own skills and words besides) ask discover the fold's tasks, which
// nobody ran. "none" is the fourth org before anyone ran anything; after two
// orgs' runs it must see exactly that (global.k = 3).
//
// A long test (testfixture.Long): about 3 minutes on 2 cores, which
// .ci/run runs on its own and prints the table of.
func TestDiscoverLearnsFromUse(t *testing.T) {
	testfixture.Long(t)
	// What the ranking reaches today (docs/performance.md): a change that
	// loses ground fails.
	for _, set := range []struct {
		name, about string
		want        learningTargets
	}{
		{"discover500", "this project's tasks", learningTargets{othersR5: 0.01, othersNDCG: 0.02, ownR5: 0.01, ownNDCG: 0.02}},
		{"discover_public", "MCP-Bench's tasks, written outside this project", learningTargets{othersR5: 0.12, othersNDCG: 0.10, ownR5: 0.25, ownNDCG: 0.10, othersMinR5: 0.50, othersMinNDCG: 0.45}},
	} {
		t.Run(set.name, func(t *testing.T) {
			servers, _, tasks := testfixture.LoadDiscoverSet(t, set.name)
			res := crossValidate(t, filepath.Join(testfixture.DiscoverSetDir(t, set.name), "servers"), servers, tasks)
			res.log(t, set.name+" ("+set.about+")")
			res.check(t, set.want)
		})
	}
}

// learningTargets are what a set's results must reach: "others" and "own"
// R@5 and NDCG@5 at least that much over "none" (negative: at most that much
// below), and "others" at least the levels othersMin (issue 40's targets
// for a newcomer on tasks written by others, the level of a ranker trained
// on them).
type learningTargets struct {
	othersR5, othersNDCG, ownR5, ownNDCG float64
	othersMinR5, othersMinNDCG           float64
}

// foldCount is the cross-validation's folds.
const foldCount = 5

// metrics are a setting's means over the held-out tasks.
type metrics struct {
	r1, r3, r5, r10, ndcg5 float64
	n                      int
}

// add scores one answer: each hit is the tools it stands for (a tool
// itself, a skill the tools it uses), so a skill that does two of a task's
// needs in one call serves both from its one place.
func (m *metrics) add(task testfixture.Task, got [][]string) {
	m.r1 += recallAt(task, got, 1)
	m.r3 += recallAt(task, got, 3)
	m.r5 += recallAt(task, got, 5)
	m.r10 += recallAt(task, got, 10)
	m.ndcg5 += ndcgAt(task, got, 5)
	m.n++
}

// served is, for each of the first k hits, how many of task's needs it
// serves that no hit before it did.
func served(task testfixture.Task, got [][]string, k int) []int {
	done := make([]bool, len(task.Tools))
	out := make([]int, 0, k)
	for _, hit := range got[:min(k, len(got))] {
		n := 0
		for j, need := range task.Tools {
			alts := strings.Split(need, "|")
			if !done[j] && slices.ContainsFunc(hit, func(id string) bool { return slices.Contains(alts, id) }) {
				done[j] = true
				n++
			}
		}
		out = append(out, n)
	}
	return out
}

// recallAt is the share of task's needs the first k hits serve.
func recallAt(task testfixture.Task, got [][]string, k int) float64 {
	n := 0
	for _, s := range served(task, got, k) {
		n += s
	}
	return float64(n) / float64(len(task.Tools))
}

func (m metrics) mean() metrics {
	d := float64(max(m.n, 1))
	return metrics{m.r1 / d, m.r3 / d, m.r5 / d, m.r10 / d, m.ndcg5 / d, m.n}
}

// ndcgAt is NDCG@k with a skill counted as the tools it uses: each hit is
// expanded in its place into the tools it stands for, in their order, and
// the first k of that list score as tools do (a gain of 1 for a tool that
// serves a need no tool before it served). A skill doing three needs at
// first place scores as those three tools at places 1 to 3 would.
func ndcgAt(task testfixture.Task, got [][]string, k int) float64 {
	var flat []string
	for _, hit := range got {
		flat = append(flat, hit...)
	}
	var dcg, ideal float64
	for i, j := range testfixture.Served(task, flat[:min(k, len(flat))]) {
		if j >= 0 {
			dcg += 1 / math.Log2(float64(i+2))
		}
	}
	for i := range min(k, len(task.Tools)) {
		ideal += 1 / math.Log2(float64(i+2))
	}
	return dcg / ideal
}

type learningResults struct {
	none, others, own metrics
	trained, failed   int
}

func (r learningResults) log(t *testing.T, set string) {
	t.Helper()
	t.Logf("%s: %d training runs (%d failed), %d held-out asks per setting", set, r.trained, r.failed, r.none.n)
	t.Logf("%-7s %6s %6s %6s %6s %7s", "who", "R@1", "R@3", "R@5", "R@10", "NDCG@5")
	for _, row := range []struct {
		name string
		m    metrics
	}{{"none", r.none.mean()}, {"others", r.others.mean()}, {"own", r.own.mean()}} {
		t.Logf("%-7s %6.3f %6.3f %6.3f %6.3f %7.3f", row.name, row.m.r1, row.m.r3, row.m.r5, row.m.r10, row.m.ndcg5)
	}
}

func (r learningResults) check(t *testing.T, want learningTargets) {
	t.Helper()
	none, others, own := r.none.mean(), r.others.mean(), r.own.mean()
	if others.r5 < none.r5+want.othersR5 || others.ndcg5 < none.ndcg5+want.othersNDCG {
		t.Errorf("others' runs move a new org by R@5 %+.3f, NDCG@5 %+.3f; want at least %+.3f, %+.3f",
			others.r5-none.r5, others.ndcg5-none.ndcg5, want.othersR5, want.othersNDCG)
	}
	if others.r5 < want.othersMinR5 || others.ndcg5 < want.othersMinNDCG {
		t.Errorf("a new org after others' runs: R@5 %.3f, NDCG@5 %.3f; want at least %.3f, %.3f",
			others.r5, others.ndcg5, want.othersMinR5, want.othersMinNDCG)
	}
	if own.r5 < none.r5+want.ownR5 || own.ndcg5 < none.ndcg5+want.ownNDCG {
		t.Errorf("an org's own history moves new tasks by R@5 %+.3f, NDCG@5 %+.3f; want at least %+.3f, %+.3f",
			own.r5-none.r5, own.ndcg5-none.ndcg5, want.ownR5, want.ownNDCG)
	}
	if float64(r.failed) > 0.1*float64(r.trained) {
		t.Errorf("%d of %d training runs failed", r.failed, r.trained)
	}
}

// crossValidate runs the folds on servers saved in dir.
func crossValidate(t *testing.T, dir string, servers []testfixture.SavedServer, tasks []testfixture.Task) learningResults {
	t.Helper()
	bin := testfixture.BuildServer(t)
	schemas := map[string]json.RawMessage{}
	cfg := map[string]any{}
	var names []string
	for _, s := range servers {
		names = append(names, s.Name)
		cfg[s.Name] = map[string]any{"type": "stdio", "command": bin, "args": []string{"-replay", filepath.Join(dir, s.Name+".json")}, "hosted": true}
		for _, tool := range s.Tools {
			schemas[s.Name+":"+tool.Name] = tool.InputSchema
		}
	}
	var res learningResults
	for fold := range foldCount {
		var train, held []testfixture.Task
		for i, task := range tasks {
			if i%foldCount == fold {
				held = append(held, task)
			} else {
				train = append(train, task)
			}
		}
		res.fold(t, fold, cfg, names, schemas, train, held)
	}
	return res
}

func (r *learningResults) fold(t *testing.T, fold int, cfg map[string]any, names []string, schemas map[string]json.RawMessage, train, held []testfixture.Task) {
	t.Helper()
	dir := t.TempDir()
	// The gateway hosts every server, so even those the default rules
	// route to the user's machine (filesystem, git) run on it.
	config, _ := json.Marshal(map[string]any{"servers": cfg, "routing": map[string]any{"server": names}, "global": map[string]any{"k": 3}})
	if err := os.WriteFile(filepath.Join(dir, "gw.json"), config, 0o600); err != nil {
		t.Fatal(err)
	}
	g := &realGatewayOrgs{t: t, dir: dir, url: startGatewayProcess(t, dir, nil, "--config", "gw.json"), keys: map[string]string{}}
	gw := &gatewaytest.Gateway{URL: g.url}
	org := func(name string) *mcp.ClientSession {
		return gw.Connect(t, g.key(fmt.Sprintf("fold%d-%s", fold, name), "app"), false)
	}
	newcomer, first := org("new"), org("a")
	runners := []*mcp.ClientSession{first, org("b"), org("c")}

	ask := func(s *mcp.ClientSession, task testfixture.Task) [][]string {
		t.Helper()
		d := gatewaytest.Discover(t, s, wire.DiscoverRequest{Query: task.Query, Limit: 10, Schemas: true})
		var got [][]string
		for _, hit := range d.Tools {
			if hit.Kind == "capability" && len(hit.ToolsUsed) > 0 {
				got = append(got, hit.ToolsUsed)
				continue
			}
			got = append(got, []string{hit.ID})
		}
		return got
	}
	same := func(a, b [][]string) bool { return slices.EqualFunc(a, b, slices.Equal) }
	before := map[string][][]string{}
	for _, task := range held {
		got := ask(newcomer, task)
		before[task.Query] = got
		r.none.add(task, got)
	}
	for i, s := range runners {
		for _, task := range train {
			r.trained++
			if a := gatewaytest.Execute(t, s, wire.ExecuteRequest{Code: taskCode(task, schemas), Intent: task.Query}); a.Status != wire.StatusSuccess {
				r.failed++
				if r.failed <= 3 {
					t.Logf("training run failed: %s %s", a.ErrorCode, a.Error)
				}
			}
		}
		if i == 1 {
			// Two orgs' runs: the newcomer sees exactly what it saw.
			for _, task := range held {
				if got := ask(newcomer, task); !same(got, before[task.Query]) {
					t.Fatalf("fold %d: two orgs' runs changed what a third org sees for %q:\nbefore %v\nafter  %v", fold, task.Query, before[task.Query], got)
				}
			}
		}
	}
	// The third org's runs reach the global layer with the flushes that
	// follow them: wait until what the newcomer sees changed, then until it
	// holds still (bounded).
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) && same(ask(newcomer, held[0]), before[held[0].Query]) {
		time.Sleep(250 * time.Millisecond)
	}
	for last, still := ask(newcomer, held[0]), 0; still < 3 && time.Now().Before(deadline); still++ {
		time.Sleep(2 * time.Second)
		if now := ask(newcomer, held[0]); !same(now, last) {
			last, still = now, -1
		}
	}
	for _, task := range held {
		r.others.add(task, ask(newcomer, task))
		r.own.add(task, ask(first, task))
	}
}

// taskCode calls each need's first tool in order, with arguments its schema
// accepts.
func taskCode(task testfixture.Task, schemas map[string]json.RawMessage) string {
	var b strings.Builder
	for _, need := range task.Tools {
		id, _, _ := strings.Cut(need, "|")
		ns, action, _ := strings.Cut(id, ":")
		args, _ := json.Marshal(exampleArgs(schemas[id]))
		fmt.Fprintf(&b, "await mcp[%q][%q](%s);\n", ns, action, args)
	}
	b.WriteString(`return "done";`)
	return b.String()
}

// exampleArgs is a value of each required property of an object schema.
func exampleArgs(raw json.RawMessage) map[string]any {
	var s map[string]any
	_ = json.Unmarshal(raw, &s)
	out := map[string]any{}
	props, _ := s["properties"].(map[string]any)
	req, _ := s["required"].([]any)
	for _, name := range req {
		n, _ := name.(string)
		p, _ := props[n].(map[string]any)
		out[n] = exampleValue(p, 0)
	}
	return out
}

func exampleValue(p map[string]any, depth int) any {
	if enum, ok := p["enum"].([]any); ok && len(enum) > 0 {
		return enum[0]
	}
	if def, ok := p["default"]; ok {
		return def
	}
	typ, _ := p["type"].(string)
	if list, ok := p["type"].([]any); ok && len(list) > 0 {
		typ, _ = list[0].(string)
	}
	if typ == "" {
		if anyOf, ok := p["anyOf"].([]any); ok && len(anyOf) > 0 {
			sub, _ := anyOf[0].(map[string]any)
			return exampleValue(sub, depth+1)
		}
	}
	switch typ {
	case "number", "integer":
		if m, ok := p["minimum"].(float64); ok {
			return m
		}
		return 1
	case "boolean":
		return true
	case "array":
		items, _ := p["items"].(map[string]any)
		n := 1
		if m, ok := p["minItems"].(float64); ok {
			n = max(n, int(m))
		}
		out := make([]any, n)
		for i := range out {
			out[i] = exampleValue(items, depth+1)
		}
		return out
	case "object":
		if depth > 4 {
			return map[string]any{}
		}
		raw, _ := json.Marshal(p)
		return exampleArgs(raw)
	}
	if f, _ := p["format"].(string); f == "uri" || f == "url" {
		return "https://example.test/"
	}
	if f, _ := p["format"].(string); f == "date" {
		return "2026-01-01"
	}
	if f, _ := p["format"].(string); f == "date-time" {
		return "2026-01-01T00:00:00Z"
	}
	if f, _ := p["format"].(string); f == "email" {
		return "someone@example.test"
	}
	return "example"
}
