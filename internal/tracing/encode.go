package tracing

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/pml-go/pml/internal/rawjson"
)

// A trace is encoded twice on every run of `pml stdio` in local mode: into
// the outbox, and into the store's row once the in-process gateway takes
// it. encoding/json's reflection was most of that cost; this encoder writes
// the same bytes json.Marshal writes for the same trace (strings escaped as
// it escapes them, raw members compacted, the same errors for times and
// numbers JSON cannot hold), field by field (docs/performance.md "JSON
// without reflection"). TestTraceJSONIsEncodingJSONs fills every field of the
// types by reflection and compares the two, so a field added to a type
// without a line here fails it.

// AppendJSON appends t's JSON encoding to b, the bytes json.Marshal(t)
// writes. Trace has no MarshalJSON of its own: the types that embed it
// (a trace list's lines) would take it for theirs.
func (t *Trace) AppendJSON(b []byte) ([]byte, error) {
	e := encoder{b: slices.Grow(b, t.sizeHint())}
	e.b = append(e.b, `{"trace_id":`...)
	e.string(t.TraceID)
	e.optString(`,"parent_trace_id":`, t.ParentTraceID)
	e.b = append(e.b, `,"workflow_id":`...)
	e.string(t.WorkflowID)
	e.optString(`,"capability_fqdn":`, t.CapabilityFQDN)
	e.optString(`,"caller":`, t.Caller)
	e.b = append(e.b, `,"executed_locally":`...)
	e.bool(t.ExecutedLocally)
	e.b = append(e.b, `,"success":`...)
	e.bool(t.Success)
	e.optString(`,"error_code":`, t.ErrorCode)
	e.optString(`,"error":`, t.Error)
	e.b = append(e.b, `,"duration_ms":`...)
	e.float(t.DurationMS)
	e.b = append(e.b, `,"started_at":`...)
	e.time(t.StartedAt)
	e.b = append(e.b, `,"tasks":`...)
	if t.Tasks == nil {
		e.b = append(e.b, "null"...)
	} else {
		e.b = append(e.b, '[')
		for i := range t.Tasks {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.task(&t.Tasks[i])
		}
		e.b = append(e.b, ']')
	}
	e.b = append(e.b, `,"decisions":`...)
	if t.Decisions == nil {
		e.b = append(e.b, "null"...)
	} else {
		e.b = append(e.b, '[')
		for i, d := range t.Decisions {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.b = append(e.b, `{"node_id":`...)
			e.string(d.NodeID)
			e.optString(`,"condition":`, d.Condition)
			e.b = append(e.b, `,"outcome":`...)
			e.string(d.Outcome)
			e.b = append(e.b, '}')
		}
		e.b = append(e.b, ']')
	}
	e.optString(`,"code":`, t.Code)
	e.optStrings(`,"tools_used":`, t.ToolsUsed)
	if len(t.DAG) > 0 {
		e.b = append(e.b, `,"dag":`...)
		e.raw(t.DAG)
	}
	e.optStrings(`,"logs":`, t.Logs)
	if t.Truncated != nil {
		e.b = append(e.b, `,"truncated":`...)
		e.truncation(t.Truncated)
	}
	e.b = append(e.b, '}')
	if e.err != nil {
		return b, fmt.Errorf("encode trace %s: %w", t.TraceID, e.err)
	}
	return e.b, nil
}

// sizeHint is about the size of t's JSON, so that the buffer is made
// once: the variable parts, plus what each task's and the trace's fixed
// members take.
func (t *Trace) sizeHint() int {
	n := 400 + len(t.Code) + len(t.DAG) + len(t.Error)
	for i := range t.Tasks {
		n += 250 + len(t.Tasks[i].Args) + len(t.Tasks[i].Result) + len(t.Tasks[i].Error)
	}
	for _, s := range t.ToolsUsed {
		n += len(s) + 3
	}
	return n
}

// encoder appends to b; the first error it meets stays in err.
type encoder struct {
	b   []byte
	err error
}

func (e *encoder) task(t *Task) {
	e.b = append(e.b, `{"task_id":`...)
	e.string(t.TaskID)
	e.b = append(e.b, `,"tool":`...)
	e.string(t.Tool)
	e.b = append(e.b, `,"tool_id":`...)
	e.string(t.ToolID)
	e.optString(`,"routing":`, t.Routing)
	e.b = append(e.b, `,"args":`...)
	if t.Args == nil {
		e.b = append(e.b, "null"...)
	} else {
		e.raw(t.Args)
	}
	if len(t.Result) > 0 {
		e.b = append(e.b, `,"result":`...)
		e.raw(t.Result)
	}
	e.b = append(e.b, `,"success":`...)
	e.bool(t.Success)
	e.optString(`,"error":`, t.Error)
	e.b = append(e.b, `,"duration_ms":`...)
	e.float(t.DurationMS)
	e.b = append(e.b, `,"started_at":`...)
	e.time(t.StartedAt)
	e.b = append(e.b, `,"layer":`...)
	e.b = strconv.AppendInt(e.b, int64(t.Layer), 10)
	e.optString(`,"child_trace_id":`, t.ChildTraceID)
	e.b = append(e.b, '}')
}

func (e *encoder) truncation(t *Truncation) {
	e.b = append(e.b, `{"spans":`...)
	e.b = strconv.AppendInt(e.b, int64(t.Spans), 10)
	e.b = append(e.b, `,"spans_aggregated":`...)
	e.b = strconv.AppendInt(e.b, int64(t.SpansAggregated), 10)
	e.b = append(e.b, `,"head_spans":`...)
	e.b = strconv.AppendInt(e.b, int64(t.HeadSpans), 10)
	if len(t.Aggregates) > 0 {
		e.b = append(e.b, `,"aggregates":[`...)
		for i, a := range t.Aggregates {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.b = append(e.b, `{"tool":`...)
			e.string(a.Tool)
			e.b = append(e.b, `,"calls":`...)
			e.b = strconv.AppendInt(e.b, int64(a.Calls), 10)
			e.b = append(e.b, `,"errors":`...)
			e.b = strconv.AppendInt(e.b, int64(a.Errors), 10)
			e.b = append(e.b, `,"total_ms":`...)
			e.float(a.TotalMS)
			e.b = append(e.b, `,"min_ms":`...)
			e.float(a.MinMS)
			e.b = append(e.b, `,"max_ms":`...)
			e.float(a.MaxMS)
			e.b = append(e.b, '}')
		}
		e.b = append(e.b, ']')
	}
	if t.Bytes != 0 {
		e.b = append(e.b, `,"bytes":`...)
		e.b = strconv.AppendInt(e.b, int64(t.Bytes), 10)
	}
	e.optStrings(`,"dropped":`, t.Dropped)
	if t.ChildTracesOmitted != 0 {
		e.b = append(e.b, `,"child_traces_omitted":`...)
		e.b = strconv.AppendInt(e.b, int64(t.ChildTracesOmitted), 10)
	}
	e.b = append(e.b, '}')
}

func (e *encoder) optString(key, s string) {
	if s != "" {
		e.b = append(e.b, key...)
		e.string(s)
	}
}

func (e *encoder) optStrings(key string, ss []string) {
	if len(ss) > 0 {
		e.b = rawjson.AppendStrings(append(e.b, key...), ss, rawjson.AsEncodingJSON)
	}
}

func (e *encoder) bool(v bool) { e.b = strconv.AppendBool(e.b, v) }

// float formats f as encoding/json does; NaN and infinities are errors.
func (e *encoder) float(f float64) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		e.fail(&json.UnsupportedValueError{Str: strconv.FormatFloat(f, 'g', -1, 64)})
		e.b = append(e.b, '0')
		return
	}
	e.b = rawjson.AppendNumber(e.b, f)
}

// time is time.Time's JSON: RFC 3339 with nanoseconds, quoted; a year
// outside 0–9999 is an error, as there.
func (e *encoder) time(t time.Time) {
	e.b = append(e.b, '"')
	b, err := t.AppendText(e.b)
	if err != nil {
		e.fail(err)
		e.b = append(e.b, '"')
		return
	}
	e.b = append(b, '"')
}

// raw appends a raw member compacted, as encoding/json appends a
// json.RawMessage: validated and compacted (rawjson.Compact, one pass when
// it is compact already), then escaped for HTML in the rare member that
// needs it.
func (e *encoder) raw(v json.RawMessage) {
	start := len(e.b)
	b, ok := rawjson.Compact(e.b, v)
	if !ok {
		var discard bytes.Buffer // for encoding/json's error, which says where
		e.fail(json.Compact(&discard, v))
		e.b = append(e.b, "null"...)
		return
	}
	e.b = b
	for _, c := range e.b[start:] {
		if c == '<' || c == '>' || c == '&' || c == 0xE2 { // 0xE2 starts U+2028 and U+2029
			var escaped bytes.Buffer
			json.HTMLEscape(&escaped, e.b[start:])
			e.b = append(e.b[:start], escaped.Bytes()...)
			return
		}
	}
}

func (e *encoder) fail(err error) {
	if e.err == nil {
		e.err = err
	}
}

// string appends s quoted as encoding/json quotes it (HTML escaping on).
func (e *encoder) string(s string) { e.b = rawjson.AppendString(e.b, s, rawjson.AsEncodingJSON) }
