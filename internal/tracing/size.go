package tracing

import (
	"encoding/json"
	"math"
)

// escaped bounds the JSON of text: encoding/json writes at most 6 bytes
// per input byte (\u00XX), plus the quotes and a separator.
func escaped(n int) int { return 6*n + 4 }

// sizeAtMost is an upper bound of the size of t's JSON, computed without
// encoding it. Raw values count as text too, since encoding/json escapes
// the HTML characters in them.
func sizeAtMost(t Trace) int {
	const fixed = 512 // member names, numbers, booleans, times
	n := fixed + escaped(len(t.TraceID)+len(t.ParentTraceID)+len(t.WorkflowID)+len(t.CapabilityFQDN)+
		len(t.ErrorCode)+len(t.Error)+len(t.Code)) + escaped(len(t.DAG))
	for _, l := range t.Logs {
		n += escaped(len(l))
	}
	for _, id := range t.ToolsUsed {
		n += escaped(len(id))
	}
	for _, d := range t.Decisions {
		n += 64 + escaped(len(d.NodeID)+len(d.Condition)+len(d.Outcome))
	}
	if tr := t.Truncated; tr != nil {
		n += fixed
		for _, a := range tr.Aggregates {
			n += 256 + escaped(len(a.Tool))
		}
		for _, d := range tr.Dropped {
			n += escaped(len(d))
		}
	}
	for _, task := range t.Tasks {
		n += fixed + escaped(len(task.TaskID)+len(task.Tool)+len(task.ToolID)+len(task.Routing)+
			len(task.Error)+len(task.ChildTraceID)) + escaped(len(task.Args)) + escaped(len(task.Result))
	}
	return n
}

// sizes is the JSON size of a trace, kept per task so a cut re-measures only
// what it changed.
type sizes struct {
	base  int // the trace with an empty task list
	tasks []int
	sum   int
}

func measure(t Trace) sizes {
	z := sizes{base: baseSize(t), tasks: make([]int, len(t.Tasks))}
	for i, task := range t.Tasks {
		z.tasks[i] = taskSize(task)
		z.sum += z.tasks[i]
	}
	return z
}

func (z *sizes) setTask(i, n int) {
	z.sum += n - z.tasks[i]
	z.tasks[i] = n
}

// total is the size of the trace's JSON: base, the tasks and their commas.
func (z sizes) total() int { return z.base + z.sum + max(len(z.tasks)-1, 0) }

// baseSize is the size of t's JSON with an empty task list ("tasks":[]).
func baseSize(t Trace) int {
	t.Tasks = []Task{}
	b, err := t.AppendJSON(nil)
	if err != nil {
		return math.MaxInt32
	}
	return len(b)
}

// taskSize is the size of task's JSON. Its arguments and result are counted
// as they are: the sanitizer writes them compact, so encoding them would
// only copy them.
func taskSize(task Task) int {
	args, result := len(task.Args), len(task.Result)
	task.Args, task.Result = nil, nil
	b, err := json.Marshal(task)
	if err != nil {
		return math.MaxInt32
	}
	// Without them: "args":null and no "result" member.
	n := len(b) - len("null") + max(args, len("null"))
	if result > 0 {
		n += len(`,"result":`) + result
	}
	return n
}
