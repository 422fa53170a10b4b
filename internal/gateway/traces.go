package gateway

import (
	"context"

	"github.com/pml-go/pml/internal/runner"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/tracing"
)

// traceSink keeps the traces of c's runs, top-level and nested: sanitized
// with the gateway's sanitizer (it holds no .env values), exported to
// OpenTelemetry linked to the caller's traceparent, and stored. A trace is
// stored before the answer, so an answered run's trace survives the replica;
// its bounds keep that within a few milliseconds.
func (s *Service) traceSink(ctx context.Context, c Caller) runner.Sink {
	return runner.Sink{Sanitizer: s.sanitizer, Keep: func(t tracing.Trace) string { return s.storeTrace(ctx, c, t) }}
}

// storeTrace exports and stores a sanitized trace; it returns the trace id.
// A store failure is logged and counted as a dropped trace, never the run's
// failure.
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
