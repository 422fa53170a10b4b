package learning

import (
	"maps"
	"slices"
	"strings"

	"github.com/pml-go/pml/internal/outputtype"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/tools"
)

// Describe is a capability's description as discover lists it: one
// sentence from its intent, or without one from what its tools do, then
// its parameters and tools, which discover's ranking reads too
// (docs/how-it-works.md "Discover and the tool graph").
func Describe(c store.Capability) string {
	var b strings.Builder
	intent := strings.TrimSpace(c.Description)
	if intent != "" {
		b.WriteString(strings.TrimRight(intent, "."))
	} else {
		b.WriteString("Learned workflow: ")
		for i, id := range c.ToolsUsed {
			if i > 0 {
				b.WriteString(", then ")
			}
			_, action := tools.Split(id)
			b.WriteString(strings.Join(nameWords(action), " "))
		}
	}
	b.WriteString(".")
	if params := slices.Sorted(maps.Keys(outputtype.ObjectOf(outputtype.Decode(c.ArgsSchema)["properties"]))); len(params) > 0 {
		b.WriteString(" Takes ")
		b.WriteString(strings.Join(params, ", "))
		b.WriteString(".")
	}
	if len(c.ToolsUsed) > 0 {
		b.WriteString(" Uses ")
		b.WriteString(strings.Join(c.ToolsUsed, ", "))
		b.WriteString(".")
	}
	return b.String()
}

// SuccessRate is the share of c's recent runs that succeeded, nil before
// any was counted.
func SuccessRate(c store.Capability) *float64 {
	if c.RecentRuns == "" {
		return nil
	}
	r := float64(strings.Count(c.RecentRuns, "1")) / float64(len(c.RecentRuns))
	return &r
}
