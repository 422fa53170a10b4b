package workspace

import (
	"context"
	"strings"
	"testing"

	"github.com/pml-go/pml/internal/tools"
	"github.com/pml-go/pml/internal/wire"
)

// discover without a limit answers the top 5 (the budget of
// docs/performance.md "What the AI pays: tool context") and counts every
// match in total; a description or argument comment it shortens ends after
// a word, never inside one (issue 33, section 3, item 7).
func TestDiscoverDefaultLimitAndWordCuts(t *testing.T) {
	p, _ := openLocal(t, `{"permissions": {"allow": ["*"]}}`)
	ctx := context.Background()
	ans, err := p.Discover(ctx, wire.DiscoverRequest{Query: "array items"})
	if err != nil {
		t.Fatal(err)
	}
	if len(ans.Tools) != 5 || ans.Total <= len(ans.Tools) {
		t.Fatalf("%d hits of %d, want 5 of more", len(ans.Tools), ans.Total)
	}

	// Every tool, compact: each shortened text ends at a word of the full one.
	all, err := p.Discover(ctx, wire.DiscoverRequest{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	full, err := p.Discover(ctx, wire.DiscoverRequest{Limit: 1000, Schemas: true})
	if err != nil {
		t.Fatal(err)
	}
	whole := map[string]string{}
	for _, d := range full.Tools {
		whole[d.ID] = strings.Join(strings.Fields(d.Description), " ")
	}
	cut := 0
	for _, d := range all.Tools {
		short, ok := strings.CutSuffix(d.Description, "...")
		if !ok {
			continue
		}
		cut++
		rest, ok := strings.CutPrefix(whole[d.ID], short)
		if !ok || !strings.HasPrefix(strings.TrimLeft(rest, ",;:"), " ") {
			t.Errorf("%s: %q cuts %q inside a word", d.ID, d.Description, whole[d.ID])
		}
	}
	if cut == 0 {
		t.Fatal("no description was shortened: the test checks nothing")
	}
	long := tools.Info{ID: "x:y", InputSchema: []byte(`{"type":"object","properties":{"q":{"type":"string",` +
		`"description":"A search expression over names and descriptions of everything"}},"required":["q"]}`)}
	if got := tools.CompactDeclaration(long); !strings.Contains(got, "/** A search expression over names and... */") {
		t.Errorf("argument comment cut inside a word: %s", got)
	}
}
