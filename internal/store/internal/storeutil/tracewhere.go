package storeutil

import (
	"fmt"
	"strings"
	"time"

	"github.com/pml-go/pml/internal/store"
)

// Dialect is what the trace filter needs to know of a backend's SQL: how to
// test that a trace's tools include one ($%d is the placeholder), and how a
// time is passed as an argument.
type Dialect struct {
	ToolCond string
	TimeArg  func(time.Time) any
}

// TraceWhere builds the WHERE clause of f; placeholders are numbered in the
// order of the returned arguments.
func TraceWhere(f store.TraceFilter, d Dialect) (string, []any) {
	args := []any{f.Scope.Org, f.Scope.Project}
	conds := []string{"org = $1", "project = $2"}
	add := func(cond string, v any) {
		args = append(args, v)
		conds = append(conds, fmt.Sprintf(cond, len(args)))
	}
	if f.WorkflowID != "" {
		add("workflow_id = $%d", f.WorkflowID)
	}
	if f.CapabilityFQDN != "" {
		add("capability_fqdn = $%d", f.CapabilityFQDN)
	}
	if f.Tool != "" {
		add(d.ToolCond, f.Tool)
	}
	if f.Caller != "" {
		add("caller = $%d", f.Caller)
	}
	if f.Success != nil {
		add("success = $%d", *f.Success)
	}
	if f.TopLevel {
		conds = append(conds, "parent_id = ''")
	}
	if !f.Since.IsZero() {
		add("started_at >= $%d", d.TimeArg(Time(f.Since)))
	}
	if !f.Until.IsZero() {
		add("started_at < $%d", d.TimeArg(Time(f.Until)))
	}
	return strings.Join(conds, " AND "), args
}
