package tracing

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"
)

// fill sets every field reachable from v to a value that is not its zero,
// so that a field the encoder does not write makes the encodings differ.
// Strings hold what encoding/json escapes; raw members are valid JSON it
// compacts and escapes.
func fill(v reflect.Value, variant int) {
	switch v.Kind() {
	case reflect.String:
		v.SetString([]string{"a<b>&c \"q\" \\ \n\t\b\f\x01 \u2028\u2029 é \xff end", "plain"}[variant%2])
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int:
		v.SetInt(int64(7 + variant))
	case reflect.Float64:
		v.SetFloat([]float64{1.5, 1e-7, 1e21, 123456.789, -0.25}[variant%5])
	case reflect.Slice:
		if v.Type() == reflect.TypeOf(json.RawMessage(nil)) {
			v.SetBytes([]byte([]string{"{ \"k\" : [1, \"<x>&\u2028\"] }", `{"k":"v"}`, `[true,null]`}[variant%3]))
			return
		}
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := range 2 {
			fill(s.Index(i), variant+i)
		}
		v.Set(s)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(p.Elem(), variant)
		v.Set(p)
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			v.Set(reflect.ValueOf(time.Date(2026, 11, 29, 4, 15, 40, 624508210+variant, time.UTC)))
			return
		}
		for i := range v.NumField() {
			fill(v.Field(i), variant+i)
		}
	default:
		panic("fill: no value for " + v.Type().String())
	}
}

func sameAsEncodingJSON(t *testing.T, tr Trace) {
	t.Helper()
	want, wantErr := json.Marshal(tr)
	got, err := tr.AppendJSON([]byte("prefix"))
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("AppendJSON error %v, json.Marshal's %v", err, wantErr)
	}
	if err != nil {
		return
	}
	if !bytes.Equal(got, append([]byte("prefix"), want...)) {
		t.Fatalf("AppendJSON differs from json.Marshal:\n got %s\nwant %s", got[len("prefix"):], want)
	}
}

func TestTraceJSONIsEncodingJSONs(t *testing.T) {
	for variant := range 5 {
		var tr Trace
		fill(reflect.ValueOf(&tr).Elem(), variant)
		sameAsEncodingJSON(t, tr)
	}
	sameAsEncodingJSON(t, Trace{})
	sameAsEncodingJSON(t, Trace{Tasks: []Task{{}}, Decisions: []Decision{}, ToolsUsed: []string{}, DAG: json.RawMessage{},
		Truncated: &Truncation{Aggregates: []ToolAggregate{}}})
	sameAsEncodingJSON(t, trace(NewTraceID(), ""))
}

func TestTraceJSONRefusesWhatJSONCannotHold(t *testing.T) {
	for name, tr := range map[string]Trace{
		"NaN duration":      {DurationMS: math.NaN()},
		"infinite task":     {Tasks: []Task{{DurationMS: math.Inf(1)}}},
		"year 10000":        {StartedAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
		"invalid args":      {Tasks: []Task{{Args: json.RawMessage(`{"a":`)}}},
		"invalid dag":       {DAG: json.RawMessage(`nope`)},
		"aggregate NaN max": {Truncated: &Truncation{Aggregates: []ToolAggregate{{MaxMS: math.NaN()}}}},
	} {
		if _, err := tr.AppendJSON(nil); err == nil {
			t.Errorf("%s: encoded", name)
		}
		if _, err := json.Marshal(tr); err == nil {
			t.Errorf("%s: encoding/json encodes it: the test is wrong", name)
		}
	}
}

func FuzzTraceJSON(f *testing.F) {
	f.Add("id", "const x = 1;", []byte(`{"path":"/tmp/x"}`), []byte(`"Echo: one"`), 1.25)
	f.Add("\xff<&>\u2028", "\x00\x1f", []byte(" [1, 2 ] "), []byte(`{"a":"\u2029"}`), 1e-9)
	f.Fuzz(func(t *testing.T, s, code string, args, result []byte, ms float64) {
		tr := Trace{TraceID: s, Code: code, DurationMS: ms, ToolsUsed: []string{s},
			Tasks: []Task{{TaskID: s, Tool: code, Args: args, Result: result, DurationMS: ms}}}
		sameAsEncodingJSON(t, tr)
	})
}

// BenchmarkTraceJSON encodes the trace of codemode-bench.mjs's snippet:
// three echo calls.
func BenchmarkTraceJSON(b *testing.B) {
	start := time.Now()
	tr := Trace{TraceID: NewTraceID(), WorkflowID: "9feeee745cba28ab4695db95ed05882e", ExecutedLocally: true, Success: true,
		DurationMS: 1.217258, StartedAt: start, Decisions: []Decision{}, ToolsUsed: []string{"everything:echo"},
		Code: "const r0 = await mcp.everything.echo({message: \"one\"});\nconst r1 = await mcp.everything.echo({message: \"two\"});\n" +
			"const r2 = await mcp.everything.echo({message: \"three\"});\nreturn [r0, r1, r2];",
		DAG: json.RawMessage(`{"tasks":[{"depends_on":[],"id":"t1","layer":0,"tool":"everything:echo"},{"depends_on":[],"id":"t2","layer":0,"tool":"everything:echo"},{"depends_on":[],"id":"t3","layer":0,"tool":"everything:echo"}]}`)}
	for i, m := range []string{"one", "two", "three"} {
		tr.Tasks = append(tr.Tasks, Task{TaskID: "t" + string(rune('1'+i)), Tool: "everything:echo", ToolID: "everything:echo", Routing: "client",
			Args: json.RawMessage(`{"message":"` + m + `"}`), Result: json.RawMessage(`"Echo: ` + m + `"`), Success: true, DurationMS: 0.671719, StartedAt: start})
	}
	b.Run("AppendJSON", func(b *testing.B) {
		var buf []byte
		for b.Loop() {
			buf, _ = tr.AppendJSON(buf[:0])
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		for b.Loop() {
			_, _ = json.Marshal(tr)
		}
	})
}
