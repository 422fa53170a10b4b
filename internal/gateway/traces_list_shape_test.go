package gateway_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/tracing"
)

// TestTraceListLineShape pins one line of GET /api/traces byte for byte:
// the trace's own fields and the counts, never its tasks, decisions, code,
// logs or DAG.
func TestTraceListLineShape(t *testing.T) {
	g := gatewaytest.Start(t, gateway.Options{})
	base := time.Now().UTC().Truncate(time.Second).Add(-2 * time.Hour)
	parent := traceAt(base, 0, "wf-p", true)
	tr := traceAt(base, time.Second, "wf-a", false, "filesystem:read_file", "shell:exec")
	tr.TraceID = "0123456789abcdef0123456789abcdef"
	tr.ParentTraceID = parent.TraceID
	tr.CapabilityFQDN = "acme.web.text.summarize.ab12"
	tr.Tasks[1].Success, tr.Tasks[1].Error, tr.Tasks[1].Result = false, "exit 1", nil
	tr.Decisions = []tracing.Decision{{NodeID: "n1", Condition: "x > 1", Outcome: "true"}}
	tr.Code = "await mcp.filesystem.read_file({path: 'a'})"
	tr.Logs = []string{"hello"}
	tr.DAG = json.RawMessage(`{"tasks":[]}`)
	postTraces(t, g.URL, g.Key, parent, tr)

	code, body := apiCall(t, http.MethodGet, g.URL+"/api/traces?workflow_id=wf-a", g.Key, nil, nil)
	if code != http.StatusOK {
		t.Fatalf("GET /api/traces: %d %s", code, body)
	}
	var page struct {
		Traces []json.RawMessage `json:"traces"`
	}
	decode(t, body, &page)
	want := `{"trace_id":"0123456789abcdef0123456789abcdef","parent_trace_id":"` + parent.TraceID + `",` +
		`"workflow_id":"wf-a","capability_fqdn":"acme.web.text.summarize.ab12","executed_locally":true,` +
		`"success":false,"error_code":"TOOL_ERROR","error":"boom","duration_ms":12.5,` +
		`"started_at":"` + base.Add(time.Second).Format(time.RFC3339) + `","tools_used":["filesystem:read_file","shell:exec"],` +
		`"task_count":2,"failed_tasks":1}`
	if len(page.Traces) != 1 || string(page.Traces[0]) != want {
		t.Fatalf("list line:\n got %s\nwant %s", page.Traces, want)
	}

	// A trace without tools still lists them, as an empty array.
	code, body = apiCall(t, http.MethodGet, g.URL+"/api/traces?workflow_id=wf-p", g.Key, nil, nil)
	decode(t, body, &page)
	want = `{"trace_id":"` + parent.TraceID + `","workflow_id":"wf-p","executed_locally":true,"success":true,` +
		`"duration_ms":12.5,"started_at":"` + base.Format(time.RFC3339) + `","tools_used":[],"task_count":0,"failed_tasks":0}`
	if code != http.StatusOK || len(page.Traces) != 1 || string(page.Traces[0]) != want {
		t.Fatalf("list line without tools: %d\n got %s\nwant %s", code, page.Traces, want)
	}
}
