package telemetry_test

import (
	"context"
	"encoding/hex"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/pml-go/pml/internal/telemetry"
	"github.com/pml-go/pml/internal/telemetry/telemetrytest"
	"github.com/pml-go/pml/internal/tracing"
)

func TestEnabled(t *testing.T) {
	cases := []struct {
		env  map[string]string
		want bool
	}{
		{map[string]string{}, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://x/v1/traces"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x", "OTEL_SDK_DISABLED": "true"}, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x", "OTEL_TRACES_EXPORTER": "none"}, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x", "OTEL_TRACES_EXPORTER": "otlp"}, true},
	}
	for _, c := range cases {
		if got := telemetry.Enabled(func(k string) string { return c.env[k] }); got != c.want {
			t.Errorf("Enabled(%v) = %v, want %v", c.env, got, c.want)
		}
	}
}

func TestOffWhenUnset(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	e, err := telemetry.FromEnv(context.Background(), "pml-test")
	if err != nil || e != nil {
		t.Fatalf("FromEnv with no endpoint = %v, %v; want nil, nil", e, err)
	}
	// A nil exporter is usable and inert.
	e.Export(tracing.Trace{TraceID: tracing.NewTraceID()}, nil)
	if err := e.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestGRPCProtocolRefused(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	if _, err := telemetry.FromEnv(context.Background(), "pml-test"); err == nil {
		t.Fatal("want an error for the grpc protocol")
	}
}

func TestExportSpans(t *testing.T) {
	col := telemetrytest.Start(t)
	t.Setenv("OTEL_SERVICE_NAME", "")
	e, err := telemetry.FromEnv(context.Background(), "pml-test")
	if err != nil || e == nil {
		t.Fatalf("FromEnv = %v, %v", e, err)
	}
	start := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	parent := tracing.NewTraceID()
	tr := tracing.Trace{
		TraceID: tracing.NewTraceID(), ParentTraceID: parent, WorkflowID: "wf",
		Success: false, ErrorCode: "TOOL_ERROR", Error: "boom", DurationMS: 30, StartedAt: start,
		Tasks: []tracing.Task{
			{TaskID: "t1", Tool: "json:parse", ToolID: "json:parse", Routing: "server", Success: true, DurationMS: 10, StartedAt: start.Add(time.Millisecond)},
			{TaskID: "t2", Tool: "filesystem:read_file", ToolID: "filesystem:read_file", Routing: "client", Error: "no such file", DurationMS: 5, StartedAt: start.Add(12 * time.Millisecond), Layer: 1},
		},
	}
	remote := tracing.TraceContext{TraceID: tracing.NewTraceID(), ParentID: "00f067aa0ba902b7", Sampled: true}
	e.Export(tr, &remote)
	if err := e.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	spans := col.Spans()
	if len(spans) != 3 {
		t.Fatalf("got %d spans, want 3 (root + one per task)", len(spans))
	}
	var root *tracepb.Span
	byName := map[string]*tracepb.Span{}
	for _, s := range spans {
		if hex.EncodeToString(s.TraceId) != tr.TraceID {
			t.Errorf("span %s trace id %x, want the PML trace id %s", s.Name, s.TraceId, tr.TraceID)
		}
		byName[s.Name] = s
		if len(s.ParentSpanId) == 0 {
			root = s
		}
	}
	if root == nil || root.Name != "pml.execute" {
		t.Fatalf("no root span pml.execute: %v", byName)
	}
	if root.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR || root.Status.GetMessage() != "boom" {
		t.Errorf("root status = %v", root.Status)
	}
	if got, want := root.StartTimeUnixNano, uint64(start.UnixNano()); got != want {
		t.Errorf("root start = %d, want %d", got, want)
	}
	if got, want := root.EndTimeUnixNano-root.StartTimeUnixNano, uint64(30*time.Millisecond); got != want {
		t.Errorf("root duration = %d, want %d", got, want)
	}
	if len(root.Links) != 2 || hex.EncodeToString(root.Links[0].TraceId) != parent || hex.EncodeToString(root.Links[1].TraceId) != remote.TraceID {
		t.Errorf("root links = %v, want the parent trace then the traceparent", root.Links)
	}
	for _, name := range []string{"json:parse", "filesystem:read_file"} {
		s := byName[name]
		if s == nil {
			t.Fatalf("no span %s", name)
		}
		if string(s.ParentSpanId) != string(root.SpanId) {
			t.Errorf("%s parent = %x, want root %x", name, s.ParentSpanId, root.SpanId)
		}
	}
	if byName["filesystem:read_file"].Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR {
		t.Error("failed task span has no error status")
	}
	if byName["json:parse"].Status.GetCode() == tracepb.Status_STATUS_CODE_ERROR {
		t.Error("successful task span has an error status")
	}
}
