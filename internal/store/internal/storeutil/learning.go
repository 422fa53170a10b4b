package storeutil

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
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

// CheckToolTypes refuses a batch past a tenant's bound, an unbounded tool
// id, or a schema that is not a JSON object within store.MaxToolTypeBytes:
// they are inferred from what packages posted.
func CheckToolTypes(types []store.ToolType) error {
	if len(types) > store.MaxToolTypes {
		return fmt.Errorf("%d tool types in one batch; at most %d: %w", len(types), store.MaxToolTypes, store.ErrInvalid)
	}
	for _, t := range types {
		if t.Tool == "" || len(t.Tool) > maxToolIDBytes || len(t.Schema) > store.MaxToolTypeBytes || !isObject(t.Schema) {
			return fmt.Errorf("tool type of %.40q: %w", t.Tool, store.ErrInvalid)
		}
	}
	return nil
}

func isObject(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(raw, &m) == nil && m != nil
}

// CheckSeenDiscover refuses a discover past learning's bounds: a family
// or tool id too long, too many tools shown.
func CheckSeenDiscover(d store.SeenDiscover) error {
	if d.Family == "" || len(d.Family) > store.MaxFamilyBytes || len(d.Caller) > maxToolIDBytes || len(d.Shown) > store.MaxShown {
		return fmt.Errorf("seen discover of %.40q: %w", d.Family, store.ErrInvalid)
	}
	for _, t := range d.Shown {
		if t == "" || len(t) > maxToolIDBytes {
			return fmt.Errorf("seen discover showing %.40q: %w", t, store.ErrInvalid)
		}
	}
	return nil
}

// CheckToolRelevance refuses a batch past a tenant's bound, or a row with
// an unbounded family or tool id or a gain that is not a number.
func CheckToolRelevance(rows []store.ToolRelevance) error {
	if len(rows) > store.MaxToolRelevance {
		return fmt.Errorf("%d tool relevance rows in one batch; at most %d: %w", len(rows), store.MaxToolRelevance, store.ErrInvalid)
	}
	for _, r := range rows {
		if r.Family == "" || len(r.Family) > store.MaxFamilyBytes || r.Tool == "" || len(r.Tool) > maxToolIDBytes ||
			math.IsNaN(r.Gain) || math.IsInf(r.Gain, 0) {
			return fmt.Errorf("tool relevance of %.40q for %.40q: %w", r.Tool, r.Family, store.ErrInvalid)
		}
	}
	return nil
}

// SortSeenDiscovers orders discovers oldest first.
func SortSeenDiscovers(ds []store.SeenDiscover) {
	slices.SortStableFunc(ds, func(a, b store.SeenDiscover) int { return a.At.Compare(b.At) })
}

// CheckUnshare refuses a withdrawal that names no org.
func CheckUnshare(sc store.Scope) error {
	if sc.Org == "" {
		return fmt.Errorf("unshare: an org is required: %w", store.ErrInvalid)
	}
	return nil
}

// SharedWindow is how many of the newest shared rows a read considers:
// window in [1, store.MaxSharedRows], else store.MaxSharedRows.
func SharedWindow(window int) int {
	if window < 1 || window > store.MaxSharedRows {
		return store.MaxSharedRows
	}
	return window
}

// SharedLimit bounds a read of the global layer to [0, store.MaxSharedRows].
func SharedLimit(limit int) int {
	return min(max(limit, 0), store.MaxSharedRows)
}

// CheckToolWords refuses a batch of tool words past the bounds.
func CheckToolWords(rows []store.ToolWord) error {
	if len(rows) > store.MaxToolWords {
		return fmt.Errorf("%d tool words in one batch; at most %d: %w", len(rows), store.MaxToolWords, store.ErrInvalid)
	}
	for _, r := range rows {
		if r.Word == "" || len(r.Word) > store.MaxWordBytes || r.Tool == "" || len(r.Tool) > store.MaxToolIDBytes ||
			math.IsNaN(r.Weight) || math.IsInf(r.Weight, 0) || r.Weight <= 0 || r.Weight > 1e6 {
			return fmt.Errorf("tool word %.40q of %.40q: %w", r.Word, r.Tool, store.ErrInvalid)
		}
	}
	return nil
}
