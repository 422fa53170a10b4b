package storeutil

import "github.com/pml-go/pml/internal/store"

// UnionClientTools collapses rows ordered by tool ID, freshest report first,
// to one tool per ID: the union over clients, newest description winning.
func UnionClientTools(rows []store.ClientTool) []store.ClientTool {
	out := make([]store.ClientTool, 0, len(rows))
	for _, r := range rows {
		if n := len(out); n > 0 && out[n-1].ID == r.ID {
			continue
		}
		out = append(out, r)
	}
	return out
}
