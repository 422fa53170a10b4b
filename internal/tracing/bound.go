package tracing

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/pml-go/pml/internal/textcut"
)

// Limits bound one trace. Zero fields take DefaultHeadSpans,
// DefaultTailSpans and MaxTraceBytes.
type Limits struct {
	HeadSpans, TailSpans int
	MaxBytes             int
}

func (l Limits) withDefaults() Limits {
	if l.HeadSpans <= 0 {
		l.HeadSpans = DefaultHeadSpans
	}
	if l.TailSpans <= 0 {
		l.TailSpans = DefaultTailSpans
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = MaxTraceBytes
	}
	return l
}

// Field bounds that the gateway checks on ingest; Bound cuts to them so a
// trace it returns is never refused for them.
const (
	maxIDField    = 64
	maxShortField = 256
	// maxKeptTools bounds tools_used and the aggregate lines once the byte
	// cap had to remove everything else.
	maxKeptTools = 10
	// maxCount bounds one aggregate line's counts (from an untrusted trace).
	maxCount = 1 << 40
)

// Bound returns t within l, never dropping it: the tasks past the first
// HeadSpans and the last TailSpans are folded into the per-tool aggregate,
// and when the JSON is still over MaxBytes, the largest parts are cut in
// this order until it fits: arguments and results to previews, logs, code,
// the DAG and decisions to previews, arguments and results to markers, task
// errors, then fewer tasks (halving the kept head and tail), and last
// everything but the identifiers, the outcome and the aggregate. What was
// cut is named in Truncated. A trace under its bounds comes back unchanged.
// t is not modified.
func Bound(t Trace, l Limits) Trace {
	l = l.withDefaults()
	t = foldSpans(cutIdentifiers(t), l.HeadSpans, l.TailSpans)
	if sizeAtMost(t) <= l.MaxBytes {
		return t // the common case, without encoding the trace to know
	}
	z := measure(t)
	if z.total() <= l.MaxBytes {
		return t
	}
	tr := Truncation{Spans: len(t.Tasks), HeadSpans: len(t.Tasks)}
	if t.Truncated != nil {
		tr = *t.Truncated
	}
	tr.Bytes = max(tr.Bytes, z.total())
	t.Truncated = &tr
	z.base = baseSize(t)
	b := bounder{t: t, z: z, max: l.MaxBytes, tail: l.TailSpans}
	b.shrink()
	return b.t
}

type bounder struct {
	t    Trace
	z    sizes
	max  int
	tail int // the most tail tasks a later Bound keeps
}

func (b *bounder) fits() bool { return b.z.total() <= b.max }

// note records a cut and re-measures the trace without its tasks.
func (b *bounder) note(what string) {
	b.t.Truncated.Dropped = append(slices.Clone(b.t.Truncated.Dropped), what)
	b.z.base = baseSize(b.t)
}

func (b *bounder) shrink() {
	steps := []func() bool{
		func() bool { return b.payloads(16<<10, PreviewBytes) },
		func() bool { return b.payloads(2<<10, PreviewBytes/2) },
		b.texts,
		func() bool { return b.payloads(0, 0) },
		b.taskErrors,
		b.fewerTasks,
		b.bare,
	}
	for _, step := range steps {
		if step() && b.fits() {
			return
		}
	}
}

// payloads cuts every argument and result over limit to a marker with a
// preview of keep bytes (no preview when keep is 0).
func (b *bounder) payloads(limit, keep int) bool {
	b.t.Tasks = slices.Clone(b.t.Tasks)
	cut := false
	for i := range b.t.Tasks {
		task := &b.t.Tasks[i]
		changed := false
		for _, v := range []*json.RawMessage{&task.Args, &task.Result} {
			if len(*v) > limit && !isBareMarker(*v) {
				*v = shortened(*v, keep)
				changed = true
			}
		}
		if changed {
			cut = true
			b.z.setTask(i, taskSize(*task))
		}
	}
	if cut {
		what := "args and results over %d bytes (previews kept)"
		if keep == 0 {
			what = "args and results over %d bytes"
		}
		b.note(fmt.Sprintf(what, limit))
	}
	return cut
}

// texts shortens logs, code, the DAG and decisions.
func (b *bounder) texts() bool {
	cut := false
	if logBytes(b.t.Logs) > 8<<10 {
		b.t.Logs = keepLogs(b.t.Logs, 8<<10)
		b.note("logs over 8192 bytes")
		cut = true
	}
	if len(b.t.Code) > 2<<10 {
		b.t.Code = cutText(b.t.Code, 2<<10, PreviewBytes)
		b.note("code over 2048 bytes (preview kept)")
		cut = true
	}
	if len(b.t.DAG) > 16<<10 {
		b.t.DAG = shortened(b.t.DAG, PreviewBytes)
		b.note("dag over 16384 bytes (preview kept)")
		cut = true
	}
	if len(b.t.Decisions) > 100 {
		b.t.Decisions = b.t.Decisions[:100]
		b.note("decisions after the first 100")
		cut = true
	}
	return cut
}

// taskErrors cuts task error messages to 256 bytes.
func (b *bounder) taskErrors() bool {
	b.t.Tasks = slices.Clone(b.t.Tasks)
	cut := false
	for i := range b.t.Tasks {
		task := &b.t.Tasks[i]
		if len(task.Error) > maxShortField {
			task.Error = cutText(task.Error, maxShortField, maxShortField/2)
			b.z.setTask(i, taskSize(*task))
			cut = true
		}
	}
	if cut {
		b.note("task errors over 256 bytes")
	}
	return cut
}

// fewerTasks folds tasks into the aggregate, halving the kept head and tail
// until the trace fits or no task is left.
func (b *bounder) fewerTasks() bool {
	if len(b.t.Tasks) == 0 {
		return false
	}
	for len(b.t.Tasks) > 0 && !b.fits() {
		n := len(b.t.Tasks)
		head, tail := b.t.Truncated.HeadSpans, n-b.t.Truncated.HeadSpans
		if b.t.Truncated.SpansAggregated == 0 {
			// No gap yet: keep both ends, the tail within its bound.
			tail = min(n/2, b.tail)
			head = n - tail
		}
		b.t = foldSpans(b.t, head/2, tail/2)
		b.z = measure(b.t)
	}
	b.note(fmt.Sprintf("tasks past the first %d and the last %d (aggregated)",
		b.t.Truncated.HeadSpans, len(b.t.Tasks)-b.t.Truncated.HeadSpans))
	return true
}

// bare leaves the identifiers, the outcome and a short aggregate.
func (b *bounder) bare() bool {
	b.t = foldSpans(b.t, 0, 0)
	b.t.Code, b.t.Logs, b.t.DAG = "", nil, nil
	b.t.Decisions = []Decision{}
	b.t.Error = cutText(b.t.Error, PreviewBytes, PreviewBytes/2)
	if len(b.t.ToolsUsed) > maxKeptTools {
		b.t.ToolsUsed = b.t.ToolsUsed[:maxKeptTools]
	}
	tr := *b.t.Truncated
	if len(tr.Aggregates) > maxKeptTools {
		agg := aggregator{}
		for i, l := range tr.Aggregates {
			if i >= maxKeptTools {
				l.Tool = OtherTools
			}
			agg.addLine(l)
		}
		tr.Aggregates = agg.list()
	}
	b.t.Truncated = &tr
	b.z = measure(b.t)
	b.note("code, logs, dag, decisions and all tasks")
	return true
}

// foldSpans keeps the first head tasks and the last tail ones and counts
// the others in t's aggregate. A trace folded before keeps its single gap:
// the new head never reaches past the old gap, the new tail never before it.
func foldSpans(t Trace, head, tail int) Trace {
	n := len(t.Tasks)
	gap, had := n, t.Truncated != nil
	if had && t.Truncated.SpansAggregated > 0 {
		gap = min(max(t.Truncated.HeadSpans, 0), n)
	}
	h := min(head, gap)
	k := min(tail, n-gap)
	if gap == n {
		k = min(tail, n-h)
	}
	if h+k >= n && !had {
		return t
	}
	agg := aggregator{}
	if had {
		for _, l := range t.Truncated.Aggregates {
			agg.addLine(cleanLine(l))
		}
	}
	for _, task := range t.Tasks[h : n-k] {
		agg.addTask(task)
	}
	tr := Truncation{}
	if had {
		tr = *t.Truncated
	}
	t.Tasks = slices.Concat(t.Tasks[:h], t.Tasks[n-k:])
	tr.HeadSpans = h
	if agg.calls == 0 {
		tr.HeadSpans = len(t.Tasks) // no gap: every task is in the head
	}
	tr.SpansAggregated = agg.calls
	tr.Spans = len(t.Tasks) + agg.calls
	tr.Aggregates = agg.list()
	t.Truncated = &tr
	return t
}

// cleanLine makes an aggregate line from an untrusted trace consistent.
func cleanLine(l ToolAggregate) ToolAggregate {
	l.Tool = textcut.Prefix(l.Tool, maxShortField)
	l.Calls = min(l.Calls, maxCount)
	l.Errors = min(max(l.Errors, 0), l.Calls)
	for _, f := range []*float64{&l.TotalMS, &l.MinMS, &l.MaxMS} {
		if math.IsNaN(*f) || math.IsInf(*f, 0) || *f < 0 {
			*f = 0
		}
	}
	return l
}

// cutIdentifiers cuts identifiers to the lengths the gateway accepts.
func cutIdentifiers(t Trace) Trace {
	t.WorkflowID = textcut.Prefix(t.WorkflowID, maxShortField)
	t.CapabilityFQDN = textcut.Prefix(t.CapabilityFQDN, maxShortField)
	t.ErrorCode = textcut.Prefix(t.ErrorCode, maxShortField)
	long := false
	for _, task := range t.Tasks {
		long = long || len(task.Tool) > maxShortField || len(task.ToolID) > maxShortField ||
			len(task.TaskID) > maxIDField || len(task.ChildTraceID) > maxIDField
	}
	if !long {
		return t
	}
	t.Tasks = slices.Clone(t.Tasks)
	for i := range t.Tasks {
		task := &t.Tasks[i]
		task.Tool = textcut.Prefix(task.Tool, maxShortField)
		task.ToolID = textcut.Prefix(task.ToolID, maxShortField)
		task.TaskID = textcut.Prefix(task.TaskID, maxIDField)
		task.ChildTraceID = textcut.Prefix(task.ChildTraceID, maxIDField)
	}
	return t
}

// shortened is the marker for v with a preview of keep bytes of its text,
// or without a preview when keep is 0. A marker keeps its original length.
func shortened(v json.RawMessage, keep int) json.RawMessage {
	n := originalLength(v)
	if keep == 0 {
		return json.RawMessage(fmt.Sprintf(`{"_truncated":true,"original_length":%d}`, n))
	}
	preview := prefixText(v, keep)
	if len(v) < 4<<10 {
		var m struct {
			Preview *string `json:"preview"`
		}
		if json.Unmarshal(v, &m) == nil && m.Preview != nil && isMarker(v) {
			preview = textcut.Prefix(*m.Preview, keep)
		}
	}
	return encode(truncationMarker(preview, n))
}

// originalLength is the size v stood for: a marker's original_length, else
// its own length.
func originalLength(v json.RawMessage) int {
	if isMarker(v) && len(v) < 4<<10 {
		var m struct {
			N *int `json:"original_length"`
		}
		if json.Unmarshal(v, &m) == nil && m.N != nil && *m.N >= 0 {
			return *m.N
		}
	}
	return len(v)
}

func isMarker(v json.RawMessage) bool { return strings.HasPrefix(string(v), `{"_truncated":true,`) }

// isBareMarker reports a marker without a preview: nothing left to cut.
func isBareMarker(v json.RawMessage) bool {
	return isMarker(v) && !strings.Contains(string(v), `"preview"`)
}

func logBytes(logs []string) int {
	n := 0
	for _, l := range logs {
		n += len(l) + 3
	}
	return n
}

// keepLogs keeps the first lines within limit bytes and says how many more
// there were.
func keepLogs(logs []string, limit int) []string {
	var out []string
	used := 0
	for i, l := range logs {
		if used+len(l) > limit {
			rest := len(logs) - i
			if room := limit - used; room > 64 && len(out) == i {
				out = append(out, cutText(l, room, room/2))
				rest--
			}
			if rest > 0 {
				out = append(out, fmt.Sprintf("…[TRUNCATED %d more log lines]", rest))
			}
			return out
		}
		out = append(out, l)
		used += len(l) + 3
	}
	return out
}
