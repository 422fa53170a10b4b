package traceapi

import (
	"errors"
	"fmt"
	"time"

	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/tracing"
)

// field names a trace's member in an error ("trace_id", "tasks[2].tool"),
// written only when a check fails: a trace that passes, every one a package
// sends, costs no formatting.
type field struct {
	list string // the list the member is in ("tasks"), or empty
	i    int    // its index in list
	name string // the member, or empty for an element of list
}

// member is a top-level member's field.
func member(name string) field { return field{name: name} }

func (f field) String() string {
	switch {
	case f.list == "":
		return f.name
	case f.name == "":
		return fmt.Sprintf("%s[%d]", f.list, f.i)
	}
	return fmt.Sprintf("%s[%d].%s", f.list, f.i, f.name)
}

// timeWindow is when a posted trace may have started, by the gateway's
// clock: not after now plus store.MaxClockSkew, and not before oldest (the
// retention age; zero: no bound). A time outside it would steer what the
// gateway orders by time (docs/limits.md "What a posted trace may say").
type timeWindow struct {
	now, oldest time.Time
}

func (w timeWindow) check(field field, at time.Time) error {
	switch {
	case at.After(w.now.Add(store.MaxClockSkew)):
		return fmt.Errorf("%s %s is more than %v ahead of the gateway's clock (%s)", field,
			at.UTC().Format(time.RFC3339), store.MaxClockSkew, w.now.UTC().Format(time.RFC3339))
	case !w.oldest.IsZero() && at.Before(w.oldest):
		return fmt.Errorf("%s %s is older than the gateway keeps traces (%s)", field,
			at.UTC().Format(time.RFC3339), w.oldest.UTC().Format(time.RFC3339))
	}
	return nil
}

// validateTrace checks what the store and the page rely on, and that what
// lands in an ordering, a rollup or a metric is bounded by what a package
// can honestly report. Content is not judged: the sanitizer takes care of
// that.
func validateTrace(t tracing.Trace, w timeWindow) error {
	if err := validTraceID(member("trace_id"), t.TraceID); err != nil {
		return err
	}
	if t.ParentTraceID != "" {
		if err := validTraceID(member("parent_trace_id"), t.ParentTraceID); err != nil {
			return err
		}
		if t.ParentTraceID == t.TraceID {
			return errors.New("parent_trace_id equals trace_id")
		}
	}
	switch {
	case t.StartedAt.IsZero():
		return errors.New("started_at is required")
	case t.DurationMS < 0 || t.DurationMS > maxDurationMS:
		return fmt.Errorf("duration_ms %v outside 0..%v", t.DurationMS, float64(maxDurationMS))
	case len(t.WorkflowID) > maxShortField:
		return fmt.Errorf("workflow_id is at most %d bytes", maxShortField)
	case len(t.CapabilityFQDN) > maxShortField:
		return fmt.Errorf("capability_fqdn is at most %d bytes", maxShortField)
	case len(t.ErrorCode) > maxShortField:
		return fmt.Errorf("error_code is at most %d bytes", maxShortField)
	case len(t.Tasks) > maxTasksPerTrace:
		return fmt.Errorf("tasks: %d; at most %d", len(t.Tasks), maxTasksPerTrace)
	case len(t.ToolsUsed) > maxToolsUsed:
		return fmt.Errorf("tools_used: %d; at most %d", len(t.ToolsUsed), maxToolsUsed)
	}
	if err := w.check(member("started_at"), t.StartedAt); err != nil {
		return err
	}
	for i, tool := range t.ToolsUsed {
		if err := validToolID(field{list: "tools_used", i: i}, tool); err != nil {
			return err
		}
	}
	if err := validateTruncation(t.Truncated, len(t.Tasks)); err != nil {
		return err
	}
	for i, task := range t.Tasks {
		switch {
		case task.TaskID == "" || len(task.TaskID) > maxTraceIDLen:
			return fmt.Errorf("tasks[%d].task_id must be 1 to %d bytes", i, maxTraceIDLen)
		case task.DurationMS < 0 || task.DurationMS > maxDurationMS:
			return fmt.Errorf("tasks[%d].duration_ms %v outside 0..%v", i, task.DurationMS, float64(maxDurationMS))
		case task.Routing != "" && task.Routing != "client" && task.Routing != "server":
			return fmt.Errorf("tasks[%d].routing must be client or server", i)
		case task.Layer < 0 || task.Layer > maxTasksPerTrace:
			return fmt.Errorf("tasks[%d].layer %d outside 0..%d", i, task.Layer, maxTasksPerTrace)
		}
		if err := validToolID(field{list: "tasks", i: i, name: "tool"}, task.Tool); err != nil {
			return err
		}
		if task.ToolID != "" {
			if err := validToolID(field{list: "tasks", i: i, name: "tool_id"}, task.ToolID); err != nil {
				return err
			}
		}
		if task.ChildTraceID != "" {
			if err := validTraceID(field{list: "tasks", i: i, name: "child_trace_id"}, task.ChildTraceID); err != nil {
				return err
			}
		}
		if !task.StartedAt.IsZero() {
			if err := w.check(field{list: "tasks", i: i, name: "started_at"}, task.StartedAt); err != nil {
				return err
			}
		}
	}
	return nil
}

// validToolID accepts what a package writes as a tool: "ns:action" or an
// FQDN ("org.project.ns.action.hash4"), 1 to maxToolIDLen ASCII letters,
// digits and '_', '-', '.', ':', '/'; or tracing.OtherTools, the line of
// the tools past a bound.
func validToolID(field field, id string) error {
	if id == tracing.OtherTools {
		return nil
	}
	if id == "" || len(id) > maxToolIDLen {
		return fmt.Errorf("%s must be 1 to %d bytes", field, maxToolIDLen)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' || c == ':' || c == '/') {
			return fmt.Errorf("%s %q: character %q not allowed (letters, digits, '_', '-', '.', ':', '/')", field, id, c)
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
	for i, a := range tr.Aggregates {
		if err := validToolID(field{list: "truncated.aggregates", i: i, name: "tool"}, a.Tool); err != nil {
			return err
		}
		switch {
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
func validTraceID(field field, id string) error {
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
