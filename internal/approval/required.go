package approval

import (
	"fmt"
	"slices"
	"strings"
)

// Required is the one approval_required answer for a whole plan: every item
// found before running is asked about at once, so a person decides once
// instead of once per tool.
type Required struct {
	Status       string          `json:"status"` // always "approval_required"
	ApprovalType ItemType        `json:"approval_type"`
	WorkflowID   string          `json:"workflow_id"`
	Description  string          `json:"description"`
	Context      RequiredContext `json:"context"`
	Options      []string        `json:"options"`
}

// RequiredContext carries the items themselves, and the tool ids that the
// option "always" would add to the allow list of .pml.json.
type RequiredContext struct {
	Items       []Item   `json:"items"`
	AlwaysAllow []string `json:"always_allow,omitempty"`
}

// The options of an approval_required: continue approves this execution's
// calls only; always (continue_workflow with approved and always true) also
// adds AlwaysAllow to .pml.json; abort declines.
const (
	OptionContinue = "continue"
	OptionAlways   = "always"
	OptionAbort    = "abort"
)

// AlwaysAllow returns the tool ids of items that an "always" answer may add
// to the allow list: tool permissions, but not the one-call items.
func AlwaysAllow(items []Item) []string {
	var out []string
	for _, it := range items {
		if it.Type == TypeToolPermission && !it.Once && it.Tool != "" && !slices.Contains(out, it.Tool) {
			out = append(out, it.Tool)
		}
	}
	return out
}

// typeRank orders item types by how much is at stake, which decides the
// answer's single approval_type when a plan mixes several kinds.
var typeRank = map[ItemType]int{TypeIntegrity: 0, TypeDependency: 1, TypeAPIKey: 2, TypeToolPermission: 3}

// NewRequired builds the answer for items (at least one). Items are ordered
// by stake (integrity, dependency, api_key_required, tool_permission), stably
// within a kind; approval_type is the kind of the first; the description
// lists every item on its own line.
func NewRequired(workflowID string, items []Item) Required {
	sorted := slices.Clone(items)
	slices.SortStableFunc(sorted, func(a, b Item) int { return typeRank[a.Type] - typeRank[b.Type] })
	var typ ItemType
	lines := make([]string, 0, len(sorted))
	if len(sorted) > 0 {
		typ = sorted[0].Type
	}
	for _, it := range sorted {
		lines = append(lines, it.Description)
	}
	desc := strings.Join(lines, "\n")
	if len(lines) > 1 {
		desc = "- " + strings.Join(lines, "\n- ")
	}
	always := AlwaysAllow(sorted)
	options := []string{OptionContinue, OptionAbort}
	if len(always) > 0 {
		options = []string{OptionContinue, OptionAlways, OptionAbort}
		desc += fmt.Sprintf("\nAnswer continue to approve this execution only, or always (continue_workflow with approved: true, always: true) "+
			"to also add %s to the allow list of .pml.json so it no longer asks.", strings.Join(always, ", "))
	}
	return Required{
		Status:       "approval_required",
		ApprovalType: typ,
		WorkflowID:   workflowID,
		Description:  desc,
		Context:      RequiredContext{Items: sorted, AlwaysAllow: always},
		Options:      options,
	}
}
