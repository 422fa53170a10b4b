package wire

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"

	"github.com/pml-go/pml/internal/rawjson"
)

// appendRunAnswer appends a's JSON, as Marshal would write it, when a is
// the answer of a run: a status, its result, where and how long it ran, the
// tools it used, an error. Every answer of `pml stdio`'s benchmark is one,
// and encoding it field by field takes a fraction of the reflection's time
// (docs/performance.md "JSON without reflection"). Any other answer (one that
// asks for an approval, one of execute_locally, one with details) is false:
// MarshalJSON encodes it by reflection. TestRunAnswerJSONIsMarshals sets
// each field of Answer in turn and compares the two.
func (a *Answer) appendRunAnswer(b []byte) ([]byte, bool) {
	if a.Code != "" || a.CodeHash != "" || a.DAG != nil || a.ClientTools != nil || a.ToolsUsed.Refs != nil ||
		a.ApprovalType != "" || a.Description != "" || a.Context != nil || a.Options != nil || a.Reason != "" ||
		len(a.Details) > 0 || (a.DurationMS != nil && (math.IsNaN(*a.DurationMS) || math.IsInf(*a.DurationMS, 0))) {
		return b, false
	}
	b = slices.Grow(b, 160+len(a.Result)+len(a.Error))
	b = append(b, `{"status":`...)
	b = rawjson.AppendString(b, a.Status, rawjson.AsEncodingJSONWithoutHTML)
	if len(a.Result) > 0 {
		b = append(b, `,"result":`...)
		buf := bytes.NewBuffer(b)
		if json.Compact(buf, a.Result) != nil {
			return b, false
		}
		b = buf.Bytes()
	}
	if a.ExecutedLocally != nil {
		b = append(b, `,"executed_locally":`...)
		b = strconv.AppendBool(b, *a.ExecutedLocally)
	}
	b = appendOptString(b, `,"workflow_id":`, a.WorkflowID)
	b = appendOptString(b, `,"trace_id":`, a.TraceID)
	if a.DurationMS != nil {
		b = append(b, `,"duration_ms":`...)
		b = rawjson.AppendNumber(b, *a.DurationMS)
	}
	if c := a.Capability; c != nil {
		b = append(b, `,"capability":{"id":`...)
		b = rawjson.AppendString(b, c.ID, rawjson.AsEncodingJSONWithoutHTML)
		b = append(b, `,"fqdn":`...)
		b = rawjson.AppendString(b, c.FQDN, rawjson.AsEncodingJSONWithoutHTML)
		b = append(b, `,"name":`...)
		b = rawjson.AppendString(b, c.Name, rawjson.AsEncodingJSONWithoutHTML)
		b = append(b, '}')
	}
	if len(a.Logs) > 0 {
		b = rawjson.AppendStrings(append(b, `,"logs":`...), a.Logs, rawjson.AsEncodingJSONWithoutHTML)
	}
	if a.ToolsUsed.IDs != nil {
		b = rawjson.AppendStrings(append(b, `,"tools_used":`...), a.ToolsUsed.IDs, rawjson.AsEncodingJSONWithoutHTML)
	}
	b = appendOptString(b, `,"error_code":`, a.ErrorCode)
	b = appendOptString(b, `,"error":`, a.Error)
	return append(b, '}'), true
}

func appendOptString[S ~string](b []byte, key string, s S) []byte {
	if s == "" {
		return b
	}
	return rawjson.AppendString(append(b, key...), s, rawjson.AsEncodingJSONWithoutHTML)
}
