package testfixture

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pml-go/pml/internal/tools"
)

// The discover500 benchmark (docs/performance.md "Discover at 500 tools"):
// what real npm MCP servers answered to initialize and tools/list, saved in
// test/e2e/testdata/discover500/servers, and multi-need tasks written as a
// user gives them to an agent, each with the tools it needs (tasks.json).

// SavedServer is one captured server.
type SavedServer struct {
	Package      string `json:"package"`
	Version      string `json:"version"`
	Name         string `json:"name"` // the namespace a user would give it
	Instructions string `json:"instructions"`
	ServerInfo   struct {
		Name  string `json:"name"`
		Title string `json:"title"`
	} `json:"serverInfo"`
	Tools []SavedTool `json:"tools"`
}

// SavedTool is one tool of a SavedServer's tools/list.
type SavedTool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
}

// Task is one task: each of Tools is one need, the tools that serve it
// separated by "|" (any one serves it). HeldOut tasks were never looked at
// while the ranking was tuned.
type Task struct {
	Query   string   `json:"query"`
	Tools   []string `json:"tools"`
	HeldOut bool     `json:"held_out"`
}

// Discover500Dir is the benchmark's directory.
func Discover500Dir(t testing.TB) string {
	t.Helper()
	return DiscoverSetDir(t, "discover500")
}

// DiscoverSetDir is the directory of the task set name under
// test/e2e/testdata: discover500, or discover_public (MCP-Bench's servers
// and tasks, see its README.md).
func DiscoverSetDir(t testing.TB, name string) string {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "test", "e2e", "testdata", name)
}

// LoadDiscover500 returns the saved servers, their tools as discover ranks
// them (each with what its server says of itself, tools.Info.Server), and
// the tasks, each of whose tools a saved server lists.
func LoadDiscover500(t testing.TB) ([]SavedServer, []tools.Info, []Task) {
	t.Helper()
	return LoadDiscoverSet(t, "discover500")
}

// LoadDiscoverSet is LoadDiscover500 for the task set name (DiscoverSetDir),
// which has the same layout: servers/NAME.json and tasks.json.
func LoadDiscoverSet(t testing.TB, name string) ([]SavedServer, []tools.Info, []Task) {
	t.Helper()
	dir := DiscoverSetDir(t, name)
	files, err := filepath.Glob(filepath.Join(dir, "servers", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("servers: %v (%d files)", err, len(files))
	}
	var servers []SavedServer
	var all []tools.Info
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var s SavedServer
		if err := json.Unmarshal(data, &s); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		servers = append(servers, s)
		server := tools.ServerText(s.ServerInfo.Name, s.ServerInfo.Title, "", s.Instructions)
		for _, tl := range s.Tools {
			all = append(all, tools.Info{ID: s.Name + ":" + tl.Name, Description: tl.Description,
				InputSchema: tl.InputSchema, OutputSchema: tl.OutputSchema, Server: server})
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "tasks.json"))
	if err != nil {
		t.Fatal(err)
	}
	var tasks []Task
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
	return servers, all, tasks
}

// Served reports, for each of got, the need of task it serves first (-1:
// none), each need served once.
func Served(task Task, got []string) []int {
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
	return served
}

// RecallAt is the share of task's needs the first k of got serve.
func RecallAt(task Task, got []string, k int) float64 {
	n := 0
	for _, j := range Served(task, got[:min(k, len(got))]) {
		if j >= 0 {
			n++
		}
	}
	return float64(n) / float64(len(task.Tools))
}
