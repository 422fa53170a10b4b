package gateway

import (
	"context"
	"encoding/json"

	"github.com/pml-go/pml/internal/analysis"
	"github.com/pml-go/pml/internal/routing"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/tracing"
)

// newRecorder records every mcp.* call of a server-side run in the bridge.
func (s *Service) newRecorder(an *analysis.Analysis, plan Plan) *tracing.Recorder {
	layers := map[string]int{}
	for _, t := range an.DAG.Tasks {
		if _, seen := layers[t.Tool]; !seen {
			layers[t.Tool] = t.Layer
		}
	}
	return tracing.NewRecorder(tracing.NewTraceID(), tracing.RecorderOptions{
		LayerOf:   func(tool string, _ int) int { return layers[tool] },
		RoutingOf: func(string) string { return string(routing.Server) },
		// Sanitized as the calls are recorded: finishing costs only the last
		// calls of a long run, on the answer's path.
		Sanitizer: s.sanitizer,
	})
}

// finishTrace completes (sanitized and bounded by the recorder) and stores
// the run's trace, and exports it to OpenTelemetry linked to the caller's
// traceparent; it returns the trace id. The trace is stored before the
// answer, so an answered run's trace survives the replica; its bounds keep
// that within a few milliseconds. A store failure is logged and counted as
// a dropped trace, never the run's failure.
func (s *Service) finishTrace(ctx context.Context, c Caller, rec *tracing.Recorder, meta tracing.Trace, an *analysis.Analysis, runErr error) string {
	dag, _ := json.Marshal(dagOf(an))
	meta.DAG = dag
	return s.storeTrace(ctx, c, rec.Finish(meta, runErr))
}

// keepTrace sanitizes, exports and stores the child trace of a capability a
// run called; it returns the trace id.
func (s *Service) keepTrace(ctx context.Context, c Caller, t tracing.Trace) string {
	return s.storeTrace(ctx, c, s.sanitizer.Trace(t))
}

// storeTrace exports and stores a sanitized trace.
func (s *Service) storeTrace(ctx context.Context, c Caller, t tracing.Trace) string {
	remote := remoteTrace(ctx)
	if remote != nil {
		s.log.Debug("server-side trace under caller's trace", "trace_id", t.TraceID, "remote_trace_id", remote.TraceID, "remote_span_id", remote.ParentID)
	}
	s.telemetry.Export(t, remote)
	if s.store == nil {
		return t.TraceID
	}
	row, err := t.StoreRecord(c.Scope)
	if err == nil {
		err = s.store.PutTraces(ctx, []store.Trace{row})
	}
	if err != nil {
		s.metrics.TracesDropped.Inc()
		s.log.Warn("storing trace", "trace_id", t.TraceID, "err", err)
		return t.TraceID
	}
	s.retention.noteWrites(c.Scope, 1)
	return t.TraceID
}
