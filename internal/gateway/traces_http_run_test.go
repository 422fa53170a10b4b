package gateway_test

import (
	"context"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/telemetry/telemetrytest"
	"github.com/pml-go/pml/internal/tracing"
	"github.com/pml-go/pml/internal/wire"
)

// headerRT adds fixed headers to every request.
type headerRT map[string]string

func (h headerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// A server-side run stores its trace (tasks, DAG, failures) and, with OTLP
// configured, exports it as spans linked to the caller's traceparent.
func TestServerRunTraceStoredAndExported(t *testing.T) {
	col := telemetrytest.Start(t)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "20") // ms: do not wait for the 5 s default batch
	g := gatewaytest.Start(t, gateway.Options{})
	remote := tracing.NewTraceID()
	client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, nil)
	s, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: g.URL + "/mcp",
		HTTPClient: &http.Client{Transport: headerRT{
			"Authorization": "Bearer " + g.Key, "traceparent": "00-" + remote + "-00f067aa0ba902b7-01"}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a := gatewaytest.Execute(t, s, wire.ExecuteRequest{Code: `
		const a = await mcp.json.parse({ data: '{"x": 1}' });
		let e = "";
		try { await mcp.json.parse({ data: "{" }); } catch (err) { e = err.message; }
		return { a, e };`})
	if a.Status != wire.StatusSuccess || a.TraceID == "" {
		t.Fatalf("%+v", a)
	}
	tree := getTree(t, g.URL, g.Key, a.TraceID)
	tr := tree.Trace
	if tr.ExecutedLocally || !tr.Success || tr.WorkflowID != a.WorkflowID || len(tr.Tasks) != 2 || len(tr.DAG) == 0 {
		t.Fatalf("stored trace: %+v", tr)
	}
	if t1, t2 := tr.Tasks[0], tr.Tasks[1]; !t1.Success || t2.Success || t2.Error == "" || t1.Routing != "server" || string(t1.Result) != `{"x":1}` {
		t.Fatalf("tasks: %+v", tr.Tasks)
	}

	var root bool
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && !root; time.Sleep(20 * time.Millisecond) {
		for _, sp := range col.Spans() {
			if hex.EncodeToString(sp.TraceId) != a.TraceID || len(sp.ParentSpanId) != 0 {
				continue
			}
			root = true
			if len(sp.Links) != 1 || hex.EncodeToString(sp.Links[0].TraceId) != remote || hex.EncodeToString(sp.Links[0].SpanId) != "00f067aa0ba902b7" {
				t.Errorf("root span links %v, want the request's traceparent", sp.Links)
			}
		}
	}
	if !root {
		t.Fatalf("no root span for trace %s among %d spans", a.TraceID, len(col.Spans()))
	}
}

// Every /metrics series is fed by what actually happens.
func TestMetricsFed(t *testing.T) {
	g := startWithFixture(t)
	s := g.Connect(t, g.Key, false)
	if a := gatewaytest.Execute(t, s, wire.ExecuteRequest{Code: `return await mcp.fx.echo({ text: "hi" })`}); a.Status != wire.StatusSuccess {
		t.Fatalf("%+v", a)
	}
	gatewaytest.Execute(t, s, wire.ExecuteRequest{Code: `throw new Error("no")`})
	local := traceAt(time.Now(), 0, "wf", false, "filesystem:read_file")
	code, body := apiCall(t, http.MethodPost, g.URL+"/api/traces", g.Key, map[string]any{"traces": []tracing.Trace{local}},
		map[string]string{wire.TraceQueueHeader: "7", wire.TracesDroppedHeader: "2"})
	if code != http.StatusOK {
		t.Fatalf("post: %d %s", code, body)
	}
	// A re-sent batch does not count its execution again; the queue depth
	// follows the latest report.
	apiCall(t, http.MethodPost, g.URL+"/api/traces", g.Key, map[string]any{"traces": []tracing.Trace{local}},
		map[string]string{wire.TraceQueueHeader: "0", wire.TracesDroppedHeader: "0"})

	_, metrics := apiCall(t, http.MethodGet, g.MetricsURL+"/metrics", "", nil, nil)
	for _, want := range []string{
		`pml_executions_total{side="server",status="success"} 1`,
		`pml_executions_total{side="server",status="error"} 1`,
		`pml_executions_total{side="local",status="error"} 1`,
		`pml_execution_duration_seconds_count{side="local"} 1`,
		`pml_execution_duration_seconds_count{side="server"} 2`,
		`pml_errors_total{code="CODE_ERROR"} 1`,
		`pml_errors_total{code="TOOL_ERROR"} 1`,
		`pml_sandbox_memory_bytes_count 1`,
		`pml_upstream_server_starts_total{kind="start",server="fx"} 1`,
		`pml_trace_queue_depth 0`,
		`pml_traces_dropped_total 2`,
	} {
		if !strings.Contains(string(metrics), want+"\n") {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// A member's figures for its package's outbox are bounded by what an outbox
// can hold (wire.MaxTraceQueue), and the next batch is stored.
func TestTraceQueueFiguresAreBounded(t *testing.T) {
	g := startWithFixture(t)
	local := traceAt(time.Now(), 0, "wf", true, "filesystem:read_file")
	code, body := apiCall(t, http.MethodPost, g.URL+"/api/traces", g.Key, map[string]any{"traces": []tracing.Trace{local}},
		map[string]string{wire.TraceQueueHeader: "2000000000", wire.TracesDroppedHeader: "9000000000000000000"})
	if code != http.StatusOK {
		t.Fatalf("post: %d %s", code, body)
	}
	_, metrics := apiCall(t, http.MethodGet, g.MetricsURL+"/metrics", "", nil, nil)
	for _, want := range []string{`pml_trace_queue_depth 10000`, `pml_traces_dropped_total 10000`} {
		if !strings.Contains(string(metrics), want+"\n") {
			t.Errorf("metrics lack %s", want)
		}
	}
	next := traceAt(time.Now(), 1, "wf2", true, "filesystem:read_file")
	if code, body := apiCall(t, http.MethodPost, g.URL+"/api/traces", g.Key, map[string]any{"traces": []tracing.Trace{next}}, nil); code != http.StatusOK {
		t.Fatalf("next post: %d %s", code, body)
	}
}
