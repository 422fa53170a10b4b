//go:build linux

package e2e

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/testfixture"
	"github.com/pml-go/pml/internal/wire"
)

// The discover500 servers (docs/performance.md "Discover at 500 tools"),
// each served from its saved initialize and tools/list by the fixture MCP
// server, behind `pml stdio`: discover over MCP ranks their 755 tools with
// what each server says of itself, answers a plan's steps together, and
// learns from the runs that follow it.
func TestDiscover500OverMCP(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 51 MCP servers")
	}
	servers, saved, tasks := testfixture.LoadDiscover500(t)
	bin := testfixture.BuildServer(t)
	dir := filepath.Join(testfixture.Discover500Dir(t), "servers")
	ws := t.TempDir()
	cfg := map[string]any{}
	for _, s := range servers {
		cfg[s.Name] = map[string]any{"command": bin, "args": []string{"-replay", filepath.Join(dir, s.Name+".json")}}
	}
	testfixture.WriteConfig(t, ws, cfg)
	p := startStdio(t, ws, nil)

	listed := map[string]bool{}
	for _, d := range p.discover(t, discoverAll()).Tools {
		listed[d.ID] = true
	}
	for _, info := range saved {
		if !listed[info.ID] {
			t.Fatalf("%s is not listed (%d tools listed)", info.ID, len(listed))
		}
	}

	// The tasks' queries, over MCP, with the built-ins beside the servers.
	var recall float64
	for _, task := range tasks {
		recall += testfixture.RecallAt(task, ids(p.discover(t, wire.DiscoverRequest{Query: task.Query, Limit: 5}).Tools), 5)
	}
	if r := recall / float64(len(tasks)); r < 0.5 {
		t.Errorf("R@5 over MCP %.3f, want ≥ 0.50", r)
	} else {
		t.Logf("R@5 over MCP: %.3f over %d tasks", r, len(tasks))
	}

	// A plan's steps in one call.
	steps := p.discover(t, wire.DiscoverRequest{Queries: []string{"get the Kubernetes pods of the staging namespace", "send a message to the #ops Slack channel"}, Limit: 4})
	if got := ids(steps.Tools); !slices.Contains(got, "kubernetes:kubectl_get") || !slices.Contains(got, "slack:slack_post_message") {
		t.Errorf("a plan's steps: %v", got)
	}

	// A server's self-description counts: AMap's tools are described in
	// Chinese, found by a query in Chinese and by its name in English.
	if got := ids(p.discover(t, wire.DiscoverRequest{Query: "查询天津的天气", Limit: 3}).Tools); !slices.Contains(got, "amap-maps:maps_weather") && !slices.Contains(got, "baidu-map:map_weather") {
		t.Errorf("a query in Chinese: %v", got)
	}

	// Learning from use: a run calls a tool the discover did not show;
	// the same query then shows it.
	const query = "weather forecast for Lyon tomorrow"
	const used = "open-meteo:meteofrance_forecast"
	if got := ids(p.discover(t, wire.DiscoverRequest{Query: query, Limit: 3}).Tools); slices.Contains(got, used) {
		t.Fatalf("%s is shown before any run: %v", used, got)
	}
	wantSuccess(t, p.execute(t, `return await mcp["open-meteo"].meteofrance_forecast({latitude: 45.76, longitude: 4.84})`), nil)
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := ids(p.discover(t, wire.DiscoverRequest{Query: query, Limit: 3}).Tools)
		if slices.Contains(got, used) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a run that called %s, %q shows %v", used, query, got)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func ids(list []wire.DiscoveredTool) []string {
	out := make([]string, len(list))
	for i, d := range list {
		out[i] = d.ID
	}
	return out
}
