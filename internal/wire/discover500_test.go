package wire

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/testfixture"
	"github.com/pml-go/pml/internal/tools"
)

// The discover500 benchmark (docs/performance.md "Discover at 500 tools"):
// the tools/list and initialize instructions of real npm MCP servers, as
// captured over stdio and saved in test/e2e/testdata/discover500/servers,
// and multi-need tasks written as a user gives them to an agent, each with
// the tools it needs (tasks.json). Half the tasks are held out: the
// ranking was tuned on the other half only.

// loadDiscover500 returns the saved servers' tools and the tasks.
func loadDiscover500(t testing.TB) ([]tools.Info, []benchTask) {
	t.Helper()
	_, all, tasks := testfixture.LoadDiscover500(t)
	return all, tasks
}

type benchTask = testfixture.Task

// benchMetrics are the benchmark's figures over a set of tasks.
type benchMetrics struct {
	tasks                  int
	r1, r3, r5, r10, ndcg5 float64
	answerBytes            float64 // a top-10 answer, averaged
	misses                 []string
}

func (m benchMetrics) String() string {
	return fmt.Sprintf("%d tasks: R@1 %.3f R@3 %.3f R@5 %.3f R@10 %.3f NDCG@5 %.3f, top-10 answer %.0f B",
		m.tasks, m.r1, m.r3, m.r5, m.r10, m.ndcg5, m.answerBytes)
}

// measureDiscover500 ranks every task's query over all and scores the top
// 10 against the task's tools.
func measureDiscover500(t testing.TB, all []tools.Info, tasks []benchTask) benchMetrics {
	t.Helper()
	var m benchMetrics
	for _, task := range tasks {
		ans := RankTools(all, DiscoverRequest{Query: task.Query, Limit: 10}, toolHit, nil, nil)
		body, err := Marshal(ans) // as the AI client reads it
		if err != nil {
			t.Fatal(err)
		}
		m.answerBytes += float64(len(body))
		got := make([]string, len(ans.Tools))
		for i, d := range ans.Tools {
			got[i] = d.ID
		}
		served := testfixture.Served(task, got)
		recall := func(k int) float64 { return testfixture.RecallAt(task, got, k) }
		m.r1 += recall(1)
		m.r3 += recall(3)
		m.r5 += recall(5)
		m.r10 += recall(10)
		var dcg, ideal float64
		for i := range 5 {
			if i < len(served) && served[i] >= 0 {
				dcg += 1 / math.Log2(float64(i+2))
			}
			if i < len(task.Tools) {
				ideal += 1 / math.Log2(float64(i+2))
			}
		}
		m.ndcg5 += dcg / ideal
		if recall(5) < 1 {
			m.misses = append(m.misses, fmt.Sprintf("%q: want %v, got %v", task.Query, task.Tools, got[:min(5, len(got))]))
		}
	}
	n := float64(len(tasks))
	m.tasks = len(tasks)
	m.r1, m.r3, m.r5, m.r10, m.ndcg5, m.answerBytes = m.r1/n, m.r3/n, m.r5/n, m.r10/n, m.ndcg5/n, m.answerBytes/n
	return m
}

func halves(tasks []benchTask) (tune, heldOut []benchTask) {
	for _, task := range tasks {
		if task.HeldOut {
			heldOut = append(heldOut, task)
		} else {
			tune = append(tune, task)
		}
	}
	return tune, heldOut
}

// TestDiscover500 prints the benchmark's figures for both halves; misses
// only for the tuning half (PML_DISCOVER500_MISSES=1), so the held-out half
// stays unseen.
func TestDiscover500(t *testing.T) {
	all, tasks := loadDiscover500(t)
	servers := map[string]bool{}
	for _, info := range all {
		servers[info.Namespace()] = true
	}
	tune, heldOut := halves(tasks)
	mt, mh := measureDiscover500(t, all, tune), measureDiscover500(t, all, heldOut)
	t.Logf("%d tools of %d servers", len(all), len(servers))
	t.Logf("tuning half:   %v", mt)
	t.Logf("held-out half: %v", mh)
	if os.Getenv("PML_DISCOVER500_MISSES") != "" {
		t.Logf("tuning misses:\n%s", strings.Join(mt.misses, "\n"))
	}
	// The targets of docs/performance.md "Discover at 500 tools".
	for half, m := range map[string]benchMetrics{"tuning": mt, "held-out": mh} {
		if m.r5 < 0.5 || m.ndcg5 < 0.45 || m.answerBytes > 4500 {
			t.Errorf("%s half: R@5 %.3f (want ≥ 0.50), NDCG@5 %.3f (want ≥ 0.45), top-10 answer %.0f B (want ≤ 4,500)",
				half, m.r5, m.ndcg5, m.answerBytes)
		}
	}
}

// A plan's steps in one discover: each step's tools in the top hits.
func TestDiscoverQueries(t *testing.T) {
	all, _ := loadDiscover500(t)
	steps := []string{"read the spreadsheet reports/q3.xlsx", "make a bar chart of it", "email the chart to my manager"}
	ans := RankTools(all, DiscoverRequest{Queries: steps, Limit: 6}, toolHit, nil, nil)
	var got []string
	for _, d := range ans.Tools {
		got = append(got, d.ID)
	}
	want := benchTask{Tools: []string{"excel:excel_read_sheet", "chart:generate_bar_chart", "gmail:send_email|send-email:send-email"}}
	if testfixture.RecallAt(want, got, 3) != 1 {
		t.Errorf("steps %q: %v, want %v first", steps, got, want.Tools)
	}
	// With a query, the query is the task the steps serve.
	ans = RankTools(all, DiscoverRequest{Query: "quarterly report for my manager", Queries: steps, Limit: 6}, toolHit, nil, nil)
	if len(ans.Tools) != 6 || ans.Total < 6 {
		t.Errorf("with a query: %d hits of %d", len(ans.Tools), ans.Total)
	}
}

// BenchmarkDiscover600 ranks the tasks' queries, top 10, over 600 of the
// saved servers' tools, and reports the median (p50) as ms/p50.
func BenchmarkDiscover600(b *testing.B) {
	all, tasks := loadDiscover500(b)
	benchDiscover(b, all[:600], tasks)
}

// benchDiscover ranks all for each task's query in turn and reports the
// median time of one discover.
func benchDiscover(b *testing.B, all []tools.Info, tasks []benchTask) {
	var took []time.Duration
	i := 0
	for b.Loop() {
		start := time.Now()
		RankTools(all, DiscoverRequest{Query: tasks[i%len(tasks)].Query, Limit: 10}, toolHit, nil, nil)
		took = append(took, time.Since(start))
		i++
	}
	b.ReportMetric(testfixture.MedianMS(took), "ms/p50")
}

// BenchmarkDiscover600Learned is BenchmarkDiscover600 with 20,000 learned
// words of tools (tools.Info.Learned): the tasks' words, a tenant's full
// store of them, spread over the 600 tools (issue 40's bound: p50 within
// 15 ms).
func BenchmarkDiscover600Learned(b *testing.B) {
	all, tasks := loadDiscover500(b)
	all = slices.Clone(all[:600])
	var words []string
	for _, task := range tasks {
		words = append(words, strings.Fields(strings.ToLower(task.Query))...)
	}
	for n := range 20_000 {
		t := &all[n%len(all)]
		t.Learned += words[(n*7)%len(words)] + " "
	}
	benchDiscover(b, all, tasks)
}
