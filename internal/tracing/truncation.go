package tracing

import (
	"cmp"
	"slices"
)

// Bounds of one trace (docs/limits.md). A run of any length gives a trace
// of bounded size: the first DefaultHeadSpans calls and the last
// DefaultTailSpans are kept as tasks, the calls in between are counted per
// tool, and the trace's JSON is cut to MaxTraceBytes after sanitizing.
const (
	DefaultHeadSpans = 1000
	DefaultTailSpans = 50
	// MaxTraceBytes is below the gateway's request limit with room for the
	// upload's envelope, so the gateway never refuses a trace for its size.
	MaxTraceBytes = 512 << 10
	// MaxAggregateTools bounds the per-tool lines of a trace's aggregate;
	// the calls of further tools are counted under OtherTools.
	MaxAggregateTools = 100
	// OtherTools is the aggregate line of the tools past MaxAggregateTools.
	OtherTools = "*"
	// DefaultChildTraces bounds the nested runs (capabilities called) that
	// keep a trace of their own, per top-level run and all its nesting.
	DefaultChildTraces = 100
)

// Truncation says what a trace's bounds left out, so a bounded trace is
// never mistaken for a whole one.
type Truncation struct {
	// Spans is how many calls the run made. Tasks holds the first HeadSpans
	// of them, then the last ones; the SpansAggregated calls in between are
	// counted per tool in Aggregates.
	Spans           int             `json:"spans"`
	SpansAggregated int             `json:"spans_aggregated"`
	HeadSpans       int             `json:"head_spans"`
	Aggregates      []ToolAggregate `json:"aggregates,omitempty"`
	// Bytes is the size of the trace's JSON before the byte cap cut it, and
	// Dropped names what the cut removed, in order; both empty when the
	// trace was under the cap.
	Bytes   int      `json:"bytes,omitempty"`
	Dropped []string `json:"dropped,omitempty"`
	// ChildTracesOmitted counts nested runs that kept no trace of their own:
	// the run's budget of child traces was spent.
	ChildTracesOmitted int `json:"child_traces_omitted,omitempty"`
}

// ToolAggregate sums the aggregated calls of one tool.
type ToolAggregate struct {
	Tool    string  `json:"tool"`
	Calls   int     `json:"calls"`
	Errors  int     `json:"errors"`
	TotalMS float64 `json:"total_ms"`
	MinMS   float64 `json:"min_ms"`
	MaxMS   float64 `json:"max_ms"`
}

// aggregator sums calls per tool, at most MaxAggregateTools lines plus
// OtherTools. Not safe for concurrent use.
type aggregator struct {
	lines map[string]*ToolAggregate
	calls int
}

func (a *aggregator) addLine(l ToolAggregate) {
	if l.Calls <= 0 {
		return
	}
	if a.lines == nil {
		a.lines = map[string]*ToolAggregate{}
	}
	a.calls += l.Calls
	cur, ok := a.lines[l.Tool]
	if !ok && len(a.lines) >= MaxAggregateTools && l.Tool != OtherTools {
		l.Tool = OtherTools
		cur, ok = a.lines[OtherTools]
	}
	if !ok {
		c := l
		a.lines[l.Tool] = &c
		return
	}
	cur.Calls += l.Calls
	cur.Errors += l.Errors
	cur.TotalMS += l.TotalMS
	cur.MinMS = min(cur.MinMS, l.MinMS)
	cur.MaxMS = max(cur.MaxMS, l.MaxMS)
}

// addTask counts one call.
func (a *aggregator) addTask(t Task) {
	errs := 0
	if !t.Success {
		errs = 1
	}
	tool := t.ToolID
	if tool == "" {
		tool = t.Tool
	}
	d := max(t.DurationMS, 0)
	a.addLine(ToolAggregate{Tool: tool, Calls: 1, Errors: errs, TotalMS: d, MinMS: d, MaxMS: d})
}

// list returns the lines, most called first (then by tool).
func (a *aggregator) list() []ToolAggregate {
	if len(a.lines) == 0 {
		return nil
	}
	out := make([]ToolAggregate, 0, len(a.lines))
	for _, l := range a.lines {
		out = append(out, *l)
	}
	slices.SortFunc(out, func(x, y ToolAggregate) int {
		if c := cmp.Compare(y.Calls, x.Calls); c != 0 {
			return c
		}
		return cmp.Compare(x.Tool, y.Tool)
	})
	return out
}

// aggregates returns t's aggregate lines; none when nothing was aggregated.
func (t Trace) aggregates() []ToolAggregate {
	if t.Truncated == nil {
		return nil
	}
	return t.Truncated.Aggregates
}
