package storeutil

import (
	"fmt"
	"strings"

	"github.com/pml-go/pml/internal/store"
)

// CheckOutcomes refuses outcomes that are not '0' and '1' letters.
func CheckOutcomes(outcomes string) error {
	if outcomes == "" || strings.Trim(outcomes, "01") != "" {
		return fmt.Errorf("outcomes %.40q: want letters 0 and 1: %w", outcomes, store.ErrInvalid)
	}
	return nil
}

// maxToolIDBytes bounds the tool ids of a graph edge.
const maxToolIDBytes = 256

// CheckToolEdges refuses a batch past the graph's bound or with an
// unbounded tool id: both come from traces a package posted.
func CheckToolEdges(edges []store.ToolEdge) error {
	if len(edges) > store.MaxToolEdges {
		return fmt.Errorf("%d tool edges in one batch; at most %d: %w", len(edges), store.MaxToolEdges, store.ErrInvalid)
	}
	for _, e := range edges {
		if e.From == "" || e.To == "" || len(e.From) > maxToolIDBytes || len(e.To) > maxToolIDBytes || e.Feeds < 0 || e.Follows < 0 {
			return fmt.Errorf("tool edge %.40q -> %.40q: %w", e.From, e.To, store.ErrInvalid)
		}
	}
	return nil
}
