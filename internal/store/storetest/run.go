// Package storetest is the one behaviour suite that every store.Store
// backend passes. A backend's test calls Run with a function that opens a
// fresh, empty store (and registers its Close with t.Cleanup).
package storetest

import (
	"testing"

	"github.com/pml-go/pml/internal/store"
)

// Run runs the whole suite against the stores open returns. open is called
// once per subtest, from that subtest, and must give an empty store.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	groups := []struct {
		name string
		run  func(t *testing.T, open func(t *testing.T) store.Store)
	}{
		{"Keys", runKeys},
		{"Capabilities", runCapabilities},
		{"Traces", runTraces},
		{"Retention", runRetention},
		{"ClientTools", runClientTools},
		{"Concurrency", runConcurrency},
		{"Uses", runUses},
		{"Dashboard", runDashboard},
		{"Learning", runLearning},
		{"Global", runGlobal},
		{"Relevance", runRelevance},
		{"SkillApprovals", runSkillApprovals},
		{"ToolWords", runToolWords},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			g.run(t, open)
		})
	}
}
