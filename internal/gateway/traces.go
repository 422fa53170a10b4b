package gateway

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/pml-go/pml/internal/gateway/traceapi"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/runner"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/tracing"
	"github.com/pml-go/pml/internal/wire"
)

// newTraceAPI builds the trace API of s (package traceapi), with the
// gateway's store, sanitizer, metrics and OpenTelemetry export.
func (s *Service) newTraceAPI(policy *traceapi.Retention, ingest traceapi.IngestLimits) *traceapi.API {
	return traceapi.New(traceapi.Config{
		Store:     s.store,
		Sanitizer: tracing.NewSanitizer(nil), // the gateway's: it holds no .env values
		Export:    func(ctx context.Context, t tracing.Trace) { s.telemetry.Export(t, remoteTrace(ctx)) },
		Observer:  traceMetrics{s.metrics},
		Learn:     s.learner.ObserveTrace,
		Busy:      s.busy,
		Logger:    s.log,
		Scope: func(r *http.Request) store.Scope {
			sc, _ := scopeFrom(r)
			return sc
		},
		Caller: func(r *http.Request) string {
			p, _ := r.Context().Value(principalCtxKey{}).(principal)
			return p.Caller
		},
		Owner: func(r *http.Request) string {
			p, _ := r.Context().Value(principalCtxKey{}).(principal)
			switch {
			case p.Caller == localCaller:
				return "this workspace" // local mode: no key, no project to speak of
			case strings.HasPrefix(p.Caller, "key:"):
				return "this API key's project"
			}
			return "this project"
		},
		Retention: policy,
		Ingest:    ingest,
	})
}

// traceSink keeps the traces of c's runs, top-level and nested: sanitized
// with the gateway's sanitizer, exported to OpenTelemetry linked to the
// caller's traceparent, and stored. A trace is stored before the answer, so
// an answered run's trace survives the replica; its bounds keep that within
// a few milliseconds. (In local mode, pml stdio's gateway in the same
// process stores it right after the answer is written: internal/afteranswer.)
// A run that was cancelled (its client went away, or a draining replica's
// grace ran out) still keeps its trace: the write does not end with the
// request, only after traceWriteTimeout.
func (s *Service) traceSink(ctx context.Context, c Caller) runner.Sink {
	return runner.Sink{Sanitizer: s.traces.Sanitizer(), Keep: func(t tracing.Trace) {
		if remote := remoteTrace(ctx); remote != nil {
			s.log.Debug("server-side trace under caller's trace", "trace_id", t.TraceID, "remote_trace_id", remote.TraceID, "remote_span_id", remote.ParentID)
		}
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), traceWriteTimeout)
		defer cancel()
		t.Caller = c.Who
		s.traces.Keep(wctx, c.Scope, t)
	}}
}

// traceWriteTimeout bounds storing one trace once its run has ended.
const traceWriteTimeout = 5 * time.Second

// IngestTraces stores traces a package recorded under the caller's tenant
// (traceapi.API.Ingest): local mode's path, POST /api/traces being the
// remote one.
func (s *Service) IngestTraces(ctx context.Context, c Caller, traces []tracing.Trace) (traceapi.IngestResult, error) {
	return s.traces.Ingest(ctx, c.Scope, c.Who, traces)
}

// IngestOwnTraces is IngestTraces for the traces of the package in this
// process, which sanitized them (traceapi.API.IngestSanitized).
func (s *Service) IngestOwnTraces(ctx context.Context, c Caller, traces []tracing.Trace) (traceapi.IngestResult, error) {
	return s.traces.IngestSanitized(ctx, c.Scope, c.Who, traces)
}

// ReportTraceQueue records a package's sync backlog and the traces it
// dropped (traceapi.API.ReportQueue).
func (s *Service) ReportTraceQueue(depth int, dropped int64) { s.traces.ReportQueue(depth, dropped) }

// ListTraces returns one page of the caller's traces (traceapi.API.List).
func (s *Service) ListTraces(ctx context.Context, c Caller, q traceapi.Query) (traceapi.Page, error) {
	return s.traces.List(ctx, c.Scope, q)
}

// traceMetrics counts the trace API's events on the gateway's series.
type traceMetrics struct{ m *Metrics }

func (t traceMetrics) LocalRun(status wire.Status, code pmlerr.Code, d time.Duration) {
	t.m.observe("local", status, code, d, 0)
}
func (t traceMetrics) TraceQueue(depth int)  { t.m.TraceQueue.Set(float64(depth)) }
func (t traceMetrics) TracesDropped(n int64) { t.m.TracesDropped.Add(float64(n)) }
func (t traceMetrics) TracesPruned(n int)    { t.m.TracesPruned.Add(float64(n)) }
