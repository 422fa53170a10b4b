package learning_test

import (
	"strings"
	"testing"

	"github.com/pml-go/pml/internal/learning"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/testfixture"
	"github.com/pml-go/pml/internal/tracing"
	"github.com/pml-go/pml/internal/wire"
)

// Learning from use, measured by simulated sessions over the discover500
// benchmark (docs/performance.md "Discover at 500 tools"): a discover of a
// task, then a run that calls the task's tools (the first that serves each
// need). The same query family then ranks them higher, and so does a
// query of the family in other words; another task's query does not move.
func TestDiscover500Learning(t *testing.T) {
	_, all, tasks := testfixture.LoadDiscover500(t)
	hit := func(string) wire.DiscoveredTool { return wire.DiscoveredTool{Routing: "server"} }
	scope := store.Scope{Org: "acme", Project: "web"}
	top := func(l *learning.Learner, q string) []string {
		ans := wire.RankTools(all, wire.DiscoverRequest{Query: q, Limit: 10}, hit, nil, l.Boost(t.Context(), scope, q))
		out := make([]string, len(ans.Tools))
		for i, d := range ans.Tools {
			out[i] = d.ID
		}
		return out
	}
	var before, after, reworded, unmoved float64
	for i, task := range tasks {
		l := learning.New(learning.Config{})
		shown := top(l, task.Query)
		before += testfixture.RecallAt(task, shown, 5)
		l.NoteDiscover(scope, "key:1", task.Query, shown)
		trace := tracing.Trace{Caller: "key:1"}
		for _, need := range task.Tools {
			id, _, _ := strings.Cut(need, "|")
			trace.Tasks = append(trace.Tasks, tracing.Task{Tool: id, ToolID: id})
		}
		l.ObserveTrace(scope, trace)
		after += testfixture.RecallAt(task, top(l, task.Query), 5)
		// The family in other words: the query less its last word.
		words := strings.Fields(task.Query)
		reworded += testfixture.RecallAt(task, top(l, strings.Join(words[:len(words)-1], " ")), 5)

		other := tasks[(i+1)%len(tasks)].Query
		if b := l.Boost(t.Context(), scope, other); b != nil {
			t.Errorf("after %q, %q is lifted: %v", task.Query, other, b)
		} else {
			unmoved++
		}
		l.Close()
	}
	n := float64(len(tasks))
	t.Logf("simulated sessions, R@5 of the query: %.3f before, %.3f after; the query less a word: %.3f; other queries unmoved: %.0f of %.0f",
		before/n, after/n, reworded/n, unmoved, n)
	if after <= before || reworded <= before {
		t.Errorf("learning did not help: R@5 %.3f before, %.3f after, %.3f reworded", before/n, after/n, reworded/n)
	}
}
