package telemetry

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/pml-go/pml/internal/tracing"
)

// Export emits t as spans: the run as the root (linked to the parent PML
// trace's root and to remote, the caller's W3C context, when given) and
// each task as a child span. Spans are batched and sent in the background;
// Export never blocks on the network.
func (e *Exporter) Export(t tracing.Trace, remote *tracing.TraceContext) {
	if e == nil {
		return
	}
	tid := traceIDOf(t.TraceID)
	var links []trace.Link
	if t.ParentTraceID != "" {
		links = append(links, trace.Link{
			SpanContext: spanContext(traceIDOf(t.ParentTraceID), spanIDOf(t.ParentTraceID, "")),
			Attributes:  []attribute.KeyValue{attribute.String("pml.link", "parent_trace")},
		})
	}
	if remote != nil {
		if sc, ok := remoteContext(*remote); ok {
			links = append(links, trace.Link{SpanContext: sc, Attributes: []attribute.KeyValue{attribute.String("pml.link", "traceparent")}})
		}
	}
	name := "pml.execute"
	if t.CapabilityFQDN != "" {
		name = "pml.capability " + t.CapabilityFQDN
	}
	ctx := withIDs(context.Background(), tid, spanIDOf(t.TraceID, ""))
	ctx, root := e.tracer.Start(ctx, name,
		trace.WithTimestamp(t.StartedAt),
		trace.WithLinks(links...),
		trace.WithAttributes(
			attribute.String("pml.trace_id", t.TraceID),
			attribute.String("pml.parent_trace_id", t.ParentTraceID),
			attribute.String("pml.workflow_id", t.WorkflowID),
			attribute.String("pml.capability_fqdn", t.CapabilityFQDN),
			attribute.Bool("pml.executed_locally", t.ExecutedLocally),
			attribute.StringSlice("pml.tools_used", t.ToolsUsed),
		))
	for _, task := range t.Tasks {
		tctx := withIDs(ctx, tid, spanIDOf(t.TraceID, task.TaskID))
		_, sp := e.tracer.Start(tctx, task.ToolID,
			trace.WithTimestamp(task.StartedAt),
			trace.WithAttributes(
				attribute.String("pml.task_id", task.TaskID),
				attribute.String("pml.tool", task.Tool),
				attribute.String("pml.routing", task.Routing),
				attribute.Int("pml.layer", task.Layer),
				attribute.String("pml.child_trace_id", task.ChildTraceID),
			))
		if !task.Success {
			sp.SetStatus(codes.Error, task.Error)
		}
		sp.End(trace.WithTimestamp(task.StartedAt.Add(millis(task.DurationMS))))
	}
	if !t.Success {
		root.SetAttributes(attribute.String("pml.error_code", t.ErrorCode))
		root.SetStatus(codes.Error, t.Error)
	}
	root.End(trace.WithTimestamp(t.StartedAt.Add(millis(t.DurationMS))))
}

func millis(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }

func spanContext(tid trace.TraceID, sid trace.SpanID) trace.SpanContext {
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled})
}

func remoteContext(tc tracing.TraceContext) (trace.SpanContext, bool) {
	tid, err := trace.TraceIDFromHex(tc.TraceID)
	if err != nil {
		return trace.SpanContext{}, false
	}
	sid, err := trace.SpanIDFromHex(tc.ParentID)
	if err != nil {
		return trace.SpanContext{}, false
	}
	var flags trace.TraceFlags
	if tc.Sampled {
		flags = trace.FlagsSampled
	}
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: flags, Remote: true}), true
}
