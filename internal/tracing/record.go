package tracing

import (
	"cmp"
	"maps"
	"slices"

	"github.com/pml-go/pml/internal/store"
)

// StoreRecord turns t (already sanitized) into the store's row: the whole
// trace as Body plus the indexed copies the trace queries filter on.
func (t Trace) StoreRecord(scope store.Scope) (store.Trace, error) {
	body, err := t.AppendJSON(nil)
	if err != nil {
		return store.Trace{}, err
	}
	toolIDs := t.ToolsUsed
	if len(toolIDs) == 0 {
		toolIDs = distinctTools(t.Tasks, t.aggregates())
	}
	return store.Trace{
		ID:             t.TraceID,
		ParentID:       t.ParentTraceID,
		Scope:          scope,
		WorkflowID:     t.WorkflowID,
		CapabilityFQDN: t.CapabilityFQDN,
		Tools:          toolIDs,
		Success:        t.Success,
		StartedAt:      t.StartedAt,
		Body:           body,
		Caller:         t.Caller,
		Stats:          t.stats(),
	}, nil
}

// stats is what the trace adds to the dashboard's rollups: its duration,
// its error code, and its calls per tool, those a bounded trace aggregated
// included.
func (t Trace) stats() *store.TraceStats {
	st := &store.TraceStats{DurationMS: t.DurationMS}
	if !t.Success {
		st.ErrorCode = t.ErrorCode
		if st.ErrorCode == "" {
			st.ErrorCode = "UNKNOWN"
		}
	}
	byTool := map[string]*store.ToolStat{}
	line := func(tool string) *store.ToolStat {
		ts, ok := byTool[tool]
		if !ok {
			ts = &store.ToolStat{Tool: tool}
			byTool[tool] = ts
		}
		return ts
	}
	for _, task := range t.Tasks {
		tool := task.ToolID
		if tool == "" {
			tool = task.Tool
		}
		ts := line(tool)
		ts.Calls++
		if !task.Success {
			ts.Errors++
		}
		ts.TotalMS += task.DurationMS
		ts.MaxMS = max(ts.MaxMS, task.DurationMS)
	}
	for _, a := range t.aggregates() {
		ts := line(a.Tool)
		ts.Calls += int64(a.Calls)
		ts.Errors += int64(a.Errors)
		ts.TotalMS += a.TotalMS
		ts.MaxMS = max(ts.MaxMS, a.MaxMS)
	}
	for _, tool := range slices.Sorted(maps.Keys(byTool)) {
		st.Tools = append(st.Tools, *byTool[tool])
	}
	// A trace, which a package may have written, adds a bounded number of
	// rollup rows: the tools with the most calls, the rest as one line.
	if len(st.Tools) > maxStatTools {
		slices.SortStableFunc(st.Tools, func(a, b store.ToolStat) int { return cmp.Compare(b.Calls, a.Calls) })
		other := store.ToolStat{Tool: OtherTools}
		for _, ts := range st.Tools[maxStatTools-1:] {
			other.Calls += ts.Calls
			other.Errors += ts.Errors
			other.TotalMS += ts.TotalMS
			other.MaxMS = max(other.MaxMS, ts.MaxMS)
		}
		st.Tools = append(st.Tools[:maxStatTools-1], other)
	}
	return st
}

// maxStatTools bounds the tools one trace adds to the dashboard's rollups.
const maxStatTools = 64
