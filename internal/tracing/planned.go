package tracing

import (
	"encoding/json"
	"slices"
)

// PlannedNotCalled returns the tools of the trace's DAG, in plan order,
// that the run never called: what a failed run (or an untaken branch) left
// out. Empty when the trace has no DAG. The tools called are ToolsUsed, or
// those of its tasks when that is empty.
func (t Trace) PlannedNotCalled() []string {
	if len(t.DAG) == 0 {
		return nil
	}
	var dag struct {
		Tasks []struct {
			Tool string `json:"tool"`
		} `json:"tasks"`
	}
	if json.Unmarshal(t.DAG, &dag) != nil {
		return nil
	}
	called := t.ToolsUsed
	if len(called) == 0 {
		called = distinctTools(t.Tasks, t.aggregates())
	}
	var out []string
	for _, task := range dag.Tasks {
		if task.Tool != "" && !slices.Contains(called, task.Tool) && !slices.Contains(out, task.Tool) {
			out = append(out, task.Tool)
		}
	}
	return out
}
