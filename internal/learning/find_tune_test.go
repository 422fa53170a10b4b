package learning

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/store/sqlite"
	"github.com/pml-go/pml/internal/testfixture"
	"github.com/pml-go/pml/internal/tools"
	"github.com/pml-go/pml/internal/tracing"
	"github.com/pml-go/pml/internal/wire"
)

// TestTuneFind is TestDiscoverLearnsFromUse's "none" and "others" settings
// (test/e2e, docs/performance.md "Discover learns from use") without the
// gateway: the same folds, words and graph learned through a Learner on
// SQLite, ranked with wire.RankTools, in seconds rather than minutes. A
// tool for tuning, not a test: PML_TUNE=discover500,discover_public runs it
// on those sets.
func TestTuneFind(t *testing.T) {
	if os.Getenv("PML_TUNE") == "" {
		t.Skip("PML_TUNE unset")
	}
	for _, set := range strings.Split(os.Getenv("PML_TUNE"), ",") {
		_, all, tasks := testfixture.LoadDiscoverSet(t, set)
		var none, others tuneMetrics
		for fold := range 5 {
			var train, held []testfixture.Task
			for i, task := range tasks {
				if i%5 == fold {
					held = append(held, task)
				} else {
					train = append(train, task)
				}
			}
			st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), fmt.Sprint(fold, ".db")))
			if err != nil {
				t.Fatal(err)
			}
			l := New(Config{Store: st, Global: GlobalConfig{K: 3, Common: func(string) bool { return true }}})
			for _, org := range []string{"a", "b", "c"} {
				scope := store.Scope{Org: org, Project: "p"}
				for _, task := range train {
					var used []string
					trace := tracing.Trace{Caller: "key:1", Success: true}
					for _, need := range task.Tools {
						id, _, _ := strings.Cut(need, "|")
						used = append(used, id)
						trace.Tasks = append(trace.Tasks, tracing.Task{Tool: id, ToolID: id})
					}
					l.LearnWords(scope, "key:1", task.Query, used)
					l.ObserveTrace(scope, trace)
				}
			}
			l.Wait()
			l.refreshGlobal(t.Context())
			newcomer := store.Scope{Org: "new", Project: "p"}
			learned := l.LearnedText(t.Context(), newcomer)
			withLearned := make([]tools.Info, len(all))
			for i, info := range all {
				info.Learned = learned(info.ID)
				withLearned[i] = info
			}
			graph := map[string][]wire.Neighbor{}
			for tool, next := range l.Successors(t.Context(), newcomer, 5) {
				for _, n := range next {
					graph[tool] = append(graph[tool], wire.Neighbor{Tool: n.Tool, Count: n.Count})
				}
			}
			meta := func(string) wire.DiscoveredTool { return wire.DiscoveredTool{Kind: "tool", Routing: "server"} }
			ask := func(infos []tools.Info, g map[string][]wire.Neighbor, q string) []string {
				ans := wire.RankTools(infos, wire.DiscoverRequest{Query: q, Limit: 10}, meta, g, nil)
				out := make([]string, len(ans.Tools))
				for i, d := range ans.Tools {
					out[i] = d.ID
				}
				return out
			}
			for _, task := range held {
				none.add(task, ask(all, nil, task.Query))
				others.add(task, ask(withLearned, graph, task.Query))
			}
			l.Close()
			_ = st.Close()
		}
		t.Logf("%s: none   %s", set, none)
		t.Logf("%s: others %s", set, others)
	}
}

type tuneMetrics struct {
	r1, r3, r5, r10, ndcg5 float64
	n                      int
}

func (m *tuneMetrics) add(task testfixture.Task, got []string) {
	m.r1 += testfixture.RecallAt(task, got, 1)
	m.r3 += testfixture.RecallAt(task, got, 3)
	m.r5 += testfixture.RecallAt(task, got, 5)
	m.r10 += testfixture.RecallAt(task, got, 10)
	var dcg, ideal float64
	for i, j := range testfixture.Served(task, got[:min(5, len(got))]) {
		if j >= 0 {
			dcg += 1 / math.Log2(float64(i+2))
		}
	}
	for i := range min(5, len(task.Tools)) {
		ideal += 1 / math.Log2(float64(i+2))
	}
	m.ndcg5 += dcg / ideal
	m.n++
}

func (m tuneMetrics) String() string {
	d := float64(m.n)
	return fmt.Sprintf("R@1 %.3f R@3 %.3f R@5 %.3f R@10 %.3f NDCG@5 %.3f (n=%d)", m.r1/d, m.r3/d, m.r5/d, m.r10/d, m.ndcg5/d, m.n)
}
