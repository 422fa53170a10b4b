package tracing

import (
	"encoding/json"
	"fmt"

	"github.com/pml-go/pml/internal/store"
)

// StoreRecord turns t (already sanitized) into the store's row: the whole
// trace as Body plus the indexed copies the trace queries filter on.
func (t Trace) StoreRecord(scope store.Scope) (store.Trace, error) {
	body, err := json.Marshal(t)
	if err != nil {
		return store.Trace{}, fmt.Errorf("encode trace %s: %w", t.TraceID, err)
	}
	toolIDs := t.ToolsUsed
	if len(toolIDs) == 0 {
		toolIDs = distinctTools(t.Tasks, t.aggregates())
	}
	return store.Trace{
		ID:             t.TraceID,
		ParentID:       t.ParentTraceID,
		Scope:          scope,
		WorkflowID:     t.WorkflowID,
		CapabilityFQDN: t.CapabilityFQDN,
		Tools:          toolIDs,
		Success:        t.Success,
		StartedAt:      t.StartedAt,
		Body:           body,
	}, nil
}
