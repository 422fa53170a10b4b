package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// ToolsUsed is an answer's tools_used: the tool ids ("ns:action") a
// successful run called, or, on execute_locally, a reference per tool
// ([{"id","fqdn","routing"}]). Refs, when not nil, is what is sent; the zero
// value leaves tools_used out, a non-nil empty list sends [].
type ToolsUsed struct {
	IDs  []string
	Refs []ToolRef
}

// ToolIDs is the tools_used of a successful run.
func ToolIDs(ids []string) ToolsUsed { return ToolsUsed{IDs: ids} }

// ToolRefs is the tools_used of an execute_locally answer.
func ToolRefs(refs []ToolRef) ToolsUsed { return ToolsUsed{Refs: refs} }

// IsZero reports whether tools_used is absent (for omitzero).
func (t ToolsUsed) IsZero() bool { return t.IDs == nil && t.Refs == nil }

// MarshalJSON writes the references when set, else the ids.
func (t ToolsUsed) MarshalJSON() ([]byte, error) {
	if t.Refs != nil {
		return Marshal(t.Refs)
	}
	return Marshal(t.IDs)
}

// UnmarshalJSON reads either shape. An empty list is kept as empty ids, so
// it is sent on as [] again.
func (t *ToolsUsed) UnmarshalJSON(data []byte) error {
	*t = ToolsUsed{}
	if bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		return nil
	}
	var ids []string
	idErr := json.Unmarshal(data, &ids)
	if idErr == nil {
		t.IDs = ids
		return nil
	}
	var refs []ToolRef
	if err := json.Unmarshal(data, &refs); err != nil {
		return fmt.Errorf("tools_used: want tool ids or tool references: %w", idErr)
	}
	t.Refs = refs
	return nil
}
