package testfixture_test

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pml-go/pml/internal/testfixture"
)

// TestDiscoverSets loads each task set as the benchmarks do (which fails on
// a server JSON that does not parse or a task tool no server lists) and
// checks what the loader does not: namespaces match their file names and are
// unique, tool ids are unique, input schemas are JSON objects, and every
// task has a query and needs.
func TestDiscoverSets(t *testing.T) {
	namespace := regexp.MustCompile(`^[a-z0-9-]+$`)
	for _, set := range []string{"discover500", "discover_public"} {
		t.Run(set, func(t *testing.T) {
			servers, all, tasks := testfixture.LoadDiscoverSet(t, set)
			files, err := filepath.Glob(filepath.Join(testfixture.DiscoverSetDir(t, set), "servers", "*.json"))
			if err != nil {
				t.Fatal(err)
			}
			names := map[string]bool{}
			for _, f := range files {
				names[strings.TrimSuffix(filepath.Base(f), ".json")] = true
			}
			seen := map[string]bool{}
			for _, s := range servers {
				if !namespace.MatchString(s.Name) || !names[s.Name] || seen[s.Name] {
					t.Errorf("server %q: not a unique namespace named like its file", s.Name)
				}
				seen[s.Name] = true
				if len(s.Tools) == 0 {
					t.Errorf("server %s lists no tool", s.Name)
				}
			}
			ids := map[string]bool{}
			for _, info := range all {
				if ids[info.ID] {
					t.Errorf("tool id %s twice", info.ID)
				}
				ids[info.ID] = true
				var schema map[string]any
				if err := json.Unmarshal(info.InputSchema, &schema); err != nil || schema["type"] != "object" {
					t.Errorf("%s: input schema is not a JSON schema object (%v)", info.ID, err)
				}
			}
			if len(tasks) == 0 {
				t.Fatal("no task")
			}
			queries := map[string]bool{}
			for i, task := range tasks {
				if strings.TrimSpace(task.Query) == "" || len(task.Tools) == 0 {
					t.Errorf("task %d: no query or no need", i)
				}
				if queries[task.Query] {
					t.Errorf("task %d: query twice", i)
				}
				queries[task.Query] = true
				needs := map[string]bool{}
				for _, need := range task.Tools {
					if needs[need] {
						t.Errorf("task %d: need %s twice", i, need)
					}
					needs[need] = true
				}
			}
			t.Logf("%s: %d servers, %d tools, %d tasks", set, len(servers), len(all), len(tasks))
		})
	}
}
