package analysis

import (
	"encoding/json"
	"slices"
)

// resourceKeys are the argument keys that name what a call acts on. Two
// calls naming the same literal value under any of them are ordered: the
// analysis does not know which calls write, so it keeps their source order.
var resourceKeys = []string{"path", "file", "filename", "source", "destination"}

// resources returns the literal strings a task's first argument names under
// the resource keys; nothing when the argument is not an object literal or
// the value is computed.
func resources(args json.RawMessage) []string {
	if len(args) == 0 || args[0] != '{' {
		return nil
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(args, &obj) != nil {
		return nil
	}
	var out []string
	for _, k := range resourceKeys {
		var s string
		if v, ok := obj[k]; ok && json.Unmarshal(v, &s) == nil && s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// orderAfter gives each task the earlier tasks it must follow because they
// name the same literal resource: for each resource, the latest earlier task
// naming it, unless that task is already a direct data dependency. Each task
// gets at most one entry per resource key, so the result stays linear.
func orderAfter(tasks []*task, deps [][]int) [][]int {
	last := map[string]int{}
	after := make([][]int, len(tasks))
	for i, t := range tasks {
		for _, r := range resources(t.args) {
			if j, ok := last[r]; ok && !slices.Contains(deps[i], j) && !slices.Contains(after[i], j) {
				after[i] = append(after[i], j)
			}
			last[r] = i
		}
		slices.Sort(after[i])
	}
	return after
}
