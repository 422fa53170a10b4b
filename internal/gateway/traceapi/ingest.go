package traceapi

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/tracing"
	"github.com/pml-go/pml/internal/wire"
)

// Bounds of an ingested batch and of each trace in it.
const (
	// MaxTracesPerRequest is the most traces one POST /api/traces takes
	// (the package's Syncer sends at most 100).
	MaxTracesPerRequest = 100
	maxTraceIDLen       = 64
	maxShortField       = 256
	// maxTasksPerTrace bounds a posted trace's tasks; the sanitizer then
	// folds them to what a bounded trace keeps (docs/limits.md "Trace
	// limits").
	maxTasksPerTrace = 10_000
	// maxToolsUsed bounds a trace's tools_used list: its tasks and its
	// aggregate lines.
	maxToolsUsed = maxTasksPerTrace + maxAggregateLines
	// maxToolIDLen bounds a tool id or FQDN (a part of an FQDN is at most
	// 128 bytes, an MCP tool name's bound).
	maxToolIDLen = 256
	// maxDurationMS bounds a run's or a call's duration: a week, longer
	// than any budget a gateway or package is configured with in practice.
	maxDurationMS = 7 * 24 * 60 * 60 * 1000
)

// A bounded trace always fits one request with room for the envelope, so a
// package never sends a trace this gateway refuses for its size (a
// negative constant here does not compile).
const _ = uint64(wire.MaxRequestBytes - tracing.MaxTraceBytes - 4<<10)

// Bounds of an ingested trace's truncation record (tracing.Bound folds the
// aggregate lines past tracing.MaxAggregateTools).
const (
	maxAggregateLines = tracing.MaxAggregateTools + 1 // the tools, and OtherTools
	maxDroppedNotes   = 16
)

// IngestResult says what a batch did: traces stored now, and traces the
// tenant already had (a re-sent batch), which are ignored.
type IngestResult struct {
	Stored     int `json:"stored"`
	Duplicates int `json:"duplicates"`
}

// Ingest stores traces a package recorded (POST /api/traces, or
// directly in local mode) under scope. The whole batch is refused with
// INVALID_REQUEST when one trace is malformed or out of bounds, naming the
// trace and the field, and nothing of it is stored; the package's Syncer
// then isolates and drops that trace and sends the rest again
// (docs/protocol.md "Traces"). Every trace is sanitized again here: the
// gateway does not trust the client to have done it. An error code outside
// the wire contract's is kept in the stored trace and counted as
// pmlerr.Unknown in the metrics and the dashboard. Storing is idempotent on
// trace_id.
func (a *API) Ingest(ctx context.Context, scope store.Scope, caller string, traces []tracing.Trace) (IngestResult, error) {
	return a.ingestBatch(ctx, scope, caller, traces, true)
}

// IngestSanitized is Ingest for traces this process's own package
// sanitized (local mode: tracing.SyncOptions.PostOwn), with the .env
// values this gateway's sanitizer does not even know: they are checked
// and stored as Ingest does, without the sanitizer's second pass.
func (a *API) IngestSanitized(ctx context.Context, scope store.Scope, caller string, traces []tracing.Trace) (IngestResult, error) {
	return a.ingestBatch(ctx, scope, caller, traces, false)
}

func (a *API) ingestBatch(ctx context.Context, scope store.Scope, caller string, traces []tracing.Trace, sanitize bool) (IngestResult, error) {
	var res IngestResult
	if len(traces) > MaxTracesPerRequest {
		return res, pmlerr.New(pmlerr.InvalidRequest, "%d traces in one request; at most %d", len(traces), MaxTracesPerRequest)
	}
	window := a.timeWindow()
	for i, t := range traces {
		if err := validateTrace(t, window); err != nil {
			return res, pmlerr.New(pmlerr.InvalidRequest, "trace %d (%q): %v", i, t.TraceID, err)
		}
	}
	if a.store == nil {
		return res, pmlerr.New(pmlerr.Internal, "this gateway has no trace store")
	}
	// Duplicates (a re-sent batch) are told apart by the store, in the
	// transaction that stores the batch, so a trace sent twice at once
	// counts its execution once in the metrics and in learning.
	kept := make([]tracing.Trace, 0, len(traces))
	rows := make([]store.Trace, 0, len(traces))
	for _, t := range traces {
		t = normalizeTrace(t)
		if sanitize {
			t = a.sanitizer.Trace(t)
		}
		t.Caller = caller // who sent it, not who it claims
		row, err := t.StoreRecord(scope)
		if err != nil {
			return res, pmlerr.New(pmlerr.InvalidRequest, "trace %q: %v", t.TraceID, err)
		}
		if row.Stats != nil && row.Stats.ErrorCode != "" {
			row.Stats.ErrorCode = string(pmlerr.Code(row.Stats.ErrorCode).Bounded())
		}
		kept = append(kept, t)
		rows = append(rows, row)
	}
	isNew, err := a.store.PutTraces(ctx, rows)
	if err != nil {
		return IngestResult{}, fmt.Errorf("store traces: %w", err)
	}
	for i, t := range kept {
		if !isNew[i] {
			res.Duplicates++
			continue
		}
		res.Stored++
		a.observeIngested(t)
		a.export(ctx, t)
		a.learn(scope, t)
	}
	a.retention.noteWrites(scope, res.Stored)
	return res, nil
}

// timeWindow is when a trace posted now may have started.
func (a *API) timeWindow() timeWindow {
	w := timeWindow{now: a.now()}
	if a.retention != nil && a.retention.policy.MaxAge > 0 {
		w.oldest = w.now.Add(-a.retention.policy.MaxAge)
	}
	return w
}

// normalizeTrace fills what a minimal client may leave out: the page and
// the tool filter rely on tool ids and non-null lists.
func normalizeTrace(t tracing.Trace) tracing.Trace {
	t.Tasks = slices.Clone(t.Tasks)
	for i := range t.Tasks {
		if t.Tasks[i].ToolID == "" {
			t.Tasks[i].ToolID = t.Tasks[i].Tool
		}
	}
	if t.Tasks == nil {
		t.Tasks = []tracing.Task{}
	}
	if t.Decisions == nil {
		t.Decisions = []tracing.Decision{}
	}
	return t
}

// observeIngested counts a package's top-level local run in the execution
// metrics, as server runs are counted when they finish. Child traces are
// part of their parent's execution.
func (a *API) observeIngested(t tracing.Trace) {
	if !t.ExecutedLocally || t.ParentTraceID != "" {
		return
	}
	status := wire.StatusSuccess
	if !t.Success {
		status = wire.StatusError
	}
	d := time.Duration(t.DurationMS * float64(time.Millisecond))
	code := pmlerr.Code("")
	if t.ErrorCode != "" {
		code = pmlerr.Code(t.ErrorCode).Bounded()
	}
	a.obs.LocalRun(status, code, d)
}

// ReportQueue records a package's sync backlog (its queue depth after this
// batch; negative: not reported) and the traces it dropped since its last
// report, each at most what a package's outbox can hold
// (wire.MaxTraceQueue): a member sends these figures.
func (a *API) ReportQueue(depth int, dropped int64) {
	if depth >= 0 {
		a.obs.TraceQueue(min(depth, wire.MaxTraceQueue))
	}
	if dropped > 0 {
		a.obs.TracesDropped(min(dropped, wire.MaxTraceQueue))
	}
}
