package wire

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pml-go/pml/internal/tools"
)

// The discover500 benchmark (docs/performance.md "Discover at 500 tools"):
// the tools/list and initialize instructions of real npm MCP servers, as
// captured over stdio and saved in test/e2e/testdata/discover500/servers,
// and multi-need tasks written as a user gives them to an agent, each with
// the tools it needs (tasks.json). Half the tasks are held out: the
// ranking was tuned on the other half only.

const discover500Dir = "../../test/e2e/testdata/discover500"

// savedServer is one captured server.
type savedServer struct {
	Package      string `json:"package"`
	Version      string `json:"version"`
	Name         string `json:"name"` // the namespace a user would give it
	Instructions string `json:"instructions"`
	ServerInfo   struct {
		Name  string `json:"name"`
		Title string `json:"title"`
	} `json:"serverInfo"`
	Tools []struct {
		Name         string          `json:"name"`
		Description  string          `json:"description"`
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema"`
	} `json:"tools"`
}

// benchTask is one task: each of Tools is one need, the tools that serve
// it separated by "|" (any one serves it).
type benchTask struct {
	Query   string   `json:"query"`
	Tools   []string `json:"tools"`
	HeldOut bool     `json:"held_out"`
}

// loadDiscover500 returns the saved servers' tools and the tasks.
func loadDiscover500(t testing.TB) ([]tools.Info, []benchTask) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(discover500Dir, "servers", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("servers: %v (%d files)", err, len(files))
	}
	var all []tools.Info
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var s savedServer
		if err := json.Unmarshal(data, &s); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, tl := range s.Tools {
			all = append(all, tools.Info{ID: s.Name + ":" + tl.Name, Description: tl.Description,
				InputSchema: tl.InputSchema, OutputSchema: tl.OutputSchema})
		}
	}
	data, err := os.ReadFile(filepath.Join(discover500Dir, "tasks.json"))
	if err != nil {
		t.Fatal(err)
	}
	var tasks []benchTask
	if err := json.Unmarshal(data, &tasks); err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, info := range all {
		known[info.ID] = true
	}
	for _, task := range tasks {
		for _, need := range task.Tools {
			for id := range strings.SplitSeq(need, "|") {
				if !known[id] {
					t.Fatalf("task %q needs %s, which no saved server lists", task.Query, id)
				}
			}
		}
	}
	return all, tasks
}

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
		ans := RankTools(all, DiscoverRequest{Query: task.Query, Limit: 10}, toolHit, nil)
		body, err := json.Marshal(ans)
		if err != nil {
			t.Fatal(err)
		}
		m.answerBytes += float64(len(body))
		got := make([]string, len(ans.Tools))
		for i, d := range ans.Tools {
			got[i] = d.ID
		}
		// served[i] is the need the i-th hit serves first, -1 for none.
		served := make([]int, len(got))
		done := make([]bool, len(task.Tools))
		for i, id := range got {
			served[i] = -1
			for j, need := range task.Tools {
				if !done[j] && slices.Contains(strings.Split(need, "|"), id) {
					served[i], done[j] = j, true
					break
				}
			}
		}
		recall := func(k int) float64 {
			n := 0
			for _, j := range served[:min(k, len(served))] {
				if j >= 0 {
					n++
				}
			}
			return float64(n) / float64(len(task.Tools))
		}
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
}
