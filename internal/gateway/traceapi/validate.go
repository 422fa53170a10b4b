package traceapi

import (
	"errors"
	"fmt"

	"github.com/pml-go/pml/internal/tracing"
)

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
