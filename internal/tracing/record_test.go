package tracing

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/store"
)

func TestStoreRecord(t *testing.T) {
	tr := Trace{
		TraceID: "c", ParentTraceID: "p", WorkflowID: "w", CapabilityFQDN: "a.b.c.d.1234", Success: true,
		StartedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		Tasks: []Task{
			{ToolID: "fs:read", Args: json.RawMessage(`{}`)},
			{ToolID: "json:parse", Args: json.RawMessage(`{"a":1}`)},
			{ToolID: "fs:read", Args: json.RawMessage(`{}`)},
		},
		Decisions: []Decision{},
	}
	scope := store.Scope{Org: "o", Project: "p"}
	rec, err := tr.StoreRecord(scope)
	if err != nil {
		t.Fatal(err)
	}
	if rec.ID != "c" || rec.ParentID != "p" || rec.Scope != scope || rec.WorkflowID != "w" ||
		rec.CapabilityFQDN != "a.b.c.d.1234" || !rec.Success || !rec.StartedAt.Equal(tr.StartedAt) {
		t.Errorf("record = %+v", rec)
	}
	if !reflect.DeepEqual(rec.Tools, []string{"fs:read", "json:parse"}) {
		t.Errorf("tools = %v", rec.Tools)
	}
	var back Trace
	if err := json.Unmarshal(rec.Body, &back); err != nil || !reflect.DeepEqual(back, tr) {
		t.Errorf("body round trip: %v\n%+v", err, back)
	}
}
