package gateway

import (
	"context"
	"errors"
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
	maxTasksPerTrace    = 10_000
	maxShortField       = 256
)

// A bounded trace always fits one request with room for the envelope, so a
// package never sends a trace this gateway refuses for its size (a
// negative constant here does not compile).
const _ = uint64(wire.MaxRequestBytes - tracing.MaxTraceBytes - 4<<10)

// Bounds of an ingested trace's truncation record (tracing.Bound folds the
// aggregate lines past tracing.MaxAggregateTools).
const (
	maxAggregateLines = 1000
	maxDroppedNotes   = 16
)

// IngestResult says what a batch did: traces stored now, and traces the
// tenant already had (a re-sent batch), which are ignored.
type IngestResult struct {
	Stored     int `json:"stored"`
	Duplicates int `json:"duplicates"`
}

// IngestTraces stores traces a package recorded (POST /api/traces, or
// directly in local mode) under the caller's tenant. The whole batch is
// refused with INVALID_REQUEST when one trace is malformed, naming it; the
// package's Syncer then isolates it. Every trace is sanitized again here:
// the gateway does not trust the client to have done it. Storing is
// idempotent on trace_id.
func (s *Service) IngestTraces(ctx context.Context, c Caller, traces []tracing.Trace) (IngestResult, error) {
	var res IngestResult
	if len(traces) > MaxTracesPerRequest {
		return res, pmlerr.New(pmlerr.InvalidRequest, "%d traces in one request; at most %d", len(traces), MaxTracesPerRequest)
	}
	for i, t := range traces {
		if err := validateTrace(t); err != nil {
			return res, pmlerr.New(pmlerr.InvalidRequest, "trace %d (%q): %v", i, t.TraceID, err)
		}
	}
	if s.store == nil {
		return res, pmlerr.New(pmlerr.Internal, "this gateway has no trace store")
	}
	san := s.sanitizer
	seen := map[string]bool{}
	var fresh []tracing.Trace
	var rows []store.Trace
	for _, t := range traces {
		dup, err := s.haveTrace(ctx, c.Scope, t.TraceID)
		if err != nil {
			return res, err
		}
		if dup || seen[t.TraceID] {
			res.Duplicates++
			continue
		}
		seen[t.TraceID] = true
		t = san.Trace(normalizeTrace(t))
		row, err := t.StoreRecord(c.Scope)
		if err != nil {
			return res, pmlerr.New(pmlerr.InvalidRequest, "trace %q: %v", t.TraceID, err)
		}
		fresh = append(fresh, t)
		rows = append(rows, row)
	}
	if err := s.store.PutTraces(ctx, rows); err != nil {
		return IngestResult{}, fmt.Errorf("store traces: %w", err)
	}
	s.retention.noteWrites(c.Scope, len(rows))
	for _, t := range fresh {
		s.observeIngested(t)
		s.telemetry.Export(t, remoteTrace(ctx))
	}
	res.Stored = len(fresh)
	return res, nil
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

// haveTrace reports whether scope already stored id. Duplicates are sorted
// out here, rather than left to the store's ON CONFLICT, so a re-sent batch
// does not count its executions twice in the metrics.
func (s *Service) haveTrace(ctx context.Context, scope store.Scope, id string) (bool, error) {
	_, err := s.store.TraceByID(ctx, scope, id)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, store.ErrNotFound):
		return false, nil
	default:
		return false, fmt.Errorf("look up trace %s: %w", id, err)
	}
}

// observeIngested counts a package's top-level local run in the execution
// metrics, as server runs are counted when they finish. Child traces are
// part of their parent's execution.
func (s *Service) observeIngested(t tracing.Trace) {
	if !t.ExecutedLocally || t.ParentTraceID != "" {
		return
	}
	status := wire.StatusSuccess
	if !t.Success {
		status = wire.StatusError
	}
	d := time.Duration(t.DurationMS * float64(time.Millisecond))
	s.metrics.observe("local", status, pmlerr.Code(t.ErrorCode), d, 0)
}

// ReportTraceQueue records a package's sync backlog (its queue depth after
// this batch) and the traces it dropped since its last report.
func (s *Service) ReportTraceQueue(depth int, dropped int64) {
	if depth >= 0 {
		s.metrics.TraceQueue.Set(float64(depth))
	}
	if dropped > 0 {
		s.metrics.TracesDropped.Add(float64(dropped))
	}
}

// validateTrace checks what the store and the page rely on. Content is not
// judged: the sanitizer takes care of that.
func validateTrace(t tracing.Trace) error {
	if err := validTraceID("trace_id", t.TraceID); err != nil {
		return err
	}
	if t.ParentTraceID != "" {
		if err := validTraceID("parent_trace_id", t.ParentTraceID); err != nil {
			return err
		}
		if t.ParentTraceID == t.TraceID {
			return errors.New("parent_trace_id equals trace_id")
		}
	}
	switch {
	case t.StartedAt.IsZero():
		return errors.New("started_at is required")
	case t.DurationMS < 0:
		return errors.New("duration_ms is negative")
	case len(t.WorkflowID) > maxShortField, len(t.CapabilityFQDN) > maxShortField, len(t.ErrorCode) > maxShortField:
		return fmt.Errorf("workflow_id, capability_fqdn and error_code are at most %d bytes", maxShortField)
	case len(t.Tasks) > maxTasksPerTrace:
		return fmt.Errorf("%d tasks; at most %d", len(t.Tasks), maxTasksPerTrace)
	}
	if err := validateTruncation(t.Truncated, len(t.Tasks)); err != nil {
		return err
	}
	for i, task := range t.Tasks {
		switch {
		case task.TaskID == "" || len(task.TaskID) > maxTraceIDLen:
			return fmt.Errorf("task %d: task_id must be 1 to %d bytes", i, maxTraceIDLen)
		case task.Tool == "" || len(task.Tool) > maxShortField || len(task.ToolID) > maxShortField:
			return fmt.Errorf("task %s: tool must be 1 to %d bytes", task.TaskID, maxShortField)
		case task.DurationMS < 0:
			return fmt.Errorf("task %s: duration_ms is negative", task.TaskID)
		case task.Routing != "" && task.Routing != "client" && task.Routing != "server":
			return fmt.Errorf("task %s: routing must be client or server", task.TaskID)
		}
	}
	return nil
}

// validateTruncation checks a trace's record of what its bounds left out.
func validateTruncation(tr *tracing.Truncation, tasks int) error {
	if tr == nil {
		return nil
	}
	switch {
	case tr.Spans < 0 || tr.SpansAggregated < 0 || tr.Bytes < 0 || tr.ChildTracesOmitted < 0:
		return errors.New("truncated: counts must not be negative")
	case tr.HeadSpans < 0 || tr.HeadSpans > tasks:
		return fmt.Errorf("truncated: head_spans %d outside 0..%d (the tasks)", tr.HeadSpans, tasks)
	case len(tr.Aggregates) > maxAggregateLines:
		return fmt.Errorf("truncated: %d aggregate lines; at most %d", len(tr.Aggregates), maxAggregateLines)
	case len(tr.Dropped) > maxDroppedNotes:
		return fmt.Errorf("truncated: %d dropped notes; at most %d", len(tr.Dropped), maxDroppedNotes)
	}
	for _, a := range tr.Aggregates {
		switch {
		case a.Tool == "" || len(a.Tool) > maxShortField:
			return fmt.Errorf("truncated: aggregate tool must be 1 to %d bytes", maxShortField)
		case a.Calls < 0 || a.Errors < 0 || a.Errors > a.Calls:
			return fmt.Errorf("truncated: aggregate %s: calls and errors must be 0 <= errors <= calls", a.Tool)
		case a.TotalMS < 0 || a.MinMS < 0 || a.MaxMS < 0:
			return fmt.Errorf("truncated: aggregate %s: durations must not be negative", a.Tool)
		}
	}
	for _, d := range tr.Dropped {
		if len(d) > maxShortField {
			return fmt.Errorf("truncated: dropped notes are at most %d bytes", maxShortField)
		}
	}
	return nil
}

// validTraceID accepts 1 to 64 letters, digits, '-' and '_': the 32-hex ids
// PML mints, UUIDs, and nothing that needs escaping in a URL or a log line.
func validTraceID(field, id string) error {
	if id == "" || len(id) > maxTraceIDLen {
		return fmt.Errorf("%s must be 1 to %d characters", field, maxTraceIDLen)
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return fmt.Errorf("%s %q: only letters, digits, '-' and '_'", field, id)
		}
	}
	return nil
}
