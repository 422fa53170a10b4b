package wire

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// setField gives field i of a a value that is not its zero.
func setField(t *testing.T, a *Answer, i int) {
	t.Helper()
	f := reflect.ValueOf(a).Elem().Field(i)
	probe := map[string]any{"status": "success", "code": "x <b> & \u2028", "id": 1}
	raw, _ := json.Marshal(probe)
	if err := json.Unmarshal(raw, f.Addr().Interface()); err == nil && !f.IsZero() {
		return
	}
	switch f.Kind() {
	case reflect.String:
		f.SetString("v <b> & \u2028 \xff")
	case reflect.Slice:
		if f.Type() == reflect.TypeOf(json.RawMessage(nil)) {
			f.SetBytes([]byte(`{ "k" : "<v>" }`))
			return
		}
		f.Set(reflect.MakeSlice(f.Type(), 1, 1))
	case reflect.Pointer:
		f.Set(reflect.New(f.Type().Elem()))
	case reflect.Map:
		f.Set(reflect.MakeMap(f.Type()))
		f.SetMapIndex(reflect.ValueOf("k"), reflect.ValueOf(any("v")))
	case reflect.Struct:
		if f.Type() == reflect.TypeOf(ToolsUsed{}) {
			f.Set(reflect.ValueOf(ToolRefs([]ToolRef{{}})))
			return
		}
		t.Fatalf("no value for field %s", reflect.TypeOf(*a).Field(i).Name)
	default:
		t.Fatalf("no value for field %s", reflect.TypeOf(*a).Field(i).Name)
	}
}

func sameAsMarshal(t *testing.T, a Answer) {
	t.Helper()
	got, ok := a.appendRunAnswer([]byte("x"))
	if !ok {
		return
	}
	want, err := Marshal(answerFields(a))
	if err != nil || !bytes.Equal(got, append([]byte("x"), want...)) {
		t.Fatalf("appendRunAnswer:\n got %s\nwant %s (%v)", got[1:], want, err)
	}
}

// A run's answer is written as Marshal writes it, whichever field of
// Answer is set besides: one the fast path does not write makes it
// decline.
func TestRunAnswerJSONIsMarshals(t *testing.T) {
	yes, ms := true, 1e-7
	base := Answer{Status: StatusSuccess, Result: json.RawMessage(`[ "Echo: <one>" , 2 ]`), ExecutedLocally: &yes,
		WorkflowID: "wf \u2028", TraceID: "t\xff", DurationMS: &ms, Capability: &CapabilityRef{ID: "c", FQDN: "f", Name: "<n>"},
		Logs: []string{"a&b"}, ToolsUsed: ToolIDs([]string{"everything:echo"}), ErrorCode: "E", Error: "e\n"}
	if _, ok := base.appendRunAnswer(nil); !ok {
		t.Fatal("a run's answer declined")
	}
	sameAsMarshal(t, base)
	sameAsMarshal(t, Answer{Status: StatusSuccess, ToolsUsed: ToolIDs([]string{})})
	for i := range reflect.TypeOf(Answer{}).NumField() {
		a := Answer{Status: StatusSuccess}
		setField(t, &a, i)
		sameAsMarshal(t, a)
		b := base
		setField(t, &b, i)
		sameAsMarshal(t, b)
	}
	for _, bad := range []Answer{{Result: json.RawMessage(`{"a":`)}, {Details: map[string]any{"line": 1}}} {
		if _, ok := bad.appendRunAnswer(nil); ok {
			t.Errorf("%+v: written", bad)
		}
	}
}

func FuzzRunAnswerJSON(f *testing.F) {
	f.Add("success", []byte(`["Echo: one"]`), "wf", 1.5, "x")
	f.Add("error", []byte(` { "a" : "<\u2028>" } `), "\xff<>&", 1e21, "")
	f.Fuzz(func(t *testing.T, status string, result []byte, id string, ms float64, log string) {
		sameAsMarshal(t, Answer{Status: Status(status), Result: result, WorkflowID: id, TraceID: id, DurationMS: &ms,
			Logs: []string{log}, ToolsUsed: ToolIDs([]string{id}), Error: log})
	})
}

// BenchmarkAnswerJSON encodes the answer of codemode-bench.mjs's snippet
// field by field (MarshalJSON) and by reflection.
func BenchmarkAnswerJSON(b *testing.B) {
	a := Answer{Status: StatusSuccess, Result: json.RawMessage(`["Echo: one","Echo: two","Echo: three"]`),
		ExecutedLocally: Bool(true), WorkflowID: "0d5b6c1e-6f5e-4c43-9d53-2f3c1b8a7e21",
		TraceID: "019ad0b3c2a47e1f9a0b6c5d4e3f2a1b", ToolsUsed: ToolIDs([]string{"everything:echo"}), DurationMS: Float(0.62)}
	b.Run("fields", func(b *testing.B) {
		for b.Loop() {
			if _, err := a.MarshalJSON(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("reflection", func(b *testing.B) {
		for b.Loop() {
			if _, err := Marshal(answerFields(a)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
