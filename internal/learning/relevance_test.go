package learning

import (
	"fmt"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/store"
)

// fakeClock is a test's clock.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func TestRelevanceLearnsFromUse(t *testing.T) {
	clock := &fakeClock{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	r := newRelevance(clock.now)
	acme, other := store.Scope{Org: "acme", Project: "p"}, store.Scope{Org: "other", Project: "p"}

	r.discovered(acme, "key:1", "save the quarterly report as a spreadsheet", []string{"fs:write_file", "excel:write"})
	clock.t = clock.t.Add(time.Minute)
	r.used(acme, "key:2", []string{"excel:write"}) // another caller's run teaches nothing
	if b := r.boost(acme, "save the quarterly report as a spreadsheet"); b != nil {
		t.Fatalf("another caller's run taught %v", b)
	}
	r.used(acme, "key:1", []string{"excel:write"})
	b := r.boost(acme, "save the quarterly report into a spreadsheet")
	if b["excel:write"] <= 0 || b["fs:write_file"] != 0 {
		t.Fatalf("the family's boost %v", b)
	}
	if b := r.boost(acme, "list the open pull requests"); b != nil {
		t.Fatalf("an unrelated query moved: %v", b)
	}
	if b := r.boost(other, "save the quarterly report as a spreadsheet"); b != nil {
		t.Fatalf("another tenant learned %v", b)
	}

	// A discover teaches once; a run past the window teaches nothing.
	r.used(acme, "key:1", []string{"excel:write"})
	if got := r.boost(acme, "save the quarterly report as a spreadsheet")["excel:write"]; got != b["excel:write"] {
		t.Fatalf("taught twice: %v then %v", b["excel:write"], got)
	}
	r.discovered(acme, "key:1", "save the quarterly report as a spreadsheet", nil)
	clock.t = clock.t.Add(feedbackWindow + time.Second)
	r.used(acme, "key:1", []string{"excel:write"})
	if got := r.boost(acme, "save the quarterly report as a spreadsheet")["excel:write"]; got > b["excel:write"] {
		t.Fatalf("a late run taught: %v then %v", b["excel:write"], got)
	}

	// It decays: half after a half-life.
	before := r.boost(acme, "save the quarterly report as a spreadsheet")["excel:write"]
	clock.t = clock.t.Add(relevanceHalfLife)
	if after := r.boost(acme, "save the quarterly report as a spreadsheet")["excel:write"]; after < before*0.49 || after > before*0.51 {
		t.Fatalf("after a half-life %v, before %v", after, before)
	}

	// Shown and not called loses what it had.
	for range 3 {
		r.discovered(acme, "key:1", "save the quarterly report as a spreadsheet", []string{"excel:write"})
		r.used(acme, "key:1", []string{"fs:write_file"})
	}
	if got := r.boost(acme, "save the quarterly report as a spreadsheet"); got["fs:write_file"] <= got["excel:write"] {
		t.Fatalf("after runs that used another tool: %v", got)
	}
}

func TestRelevanceIsBounded(t *testing.T) {
	clock := &fakeClock{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	r := newRelevance(clock.now)
	scope := store.Scope{Org: "acme", Project: "p"}
	for i := range 2 * maxFamilies {
		q := fmt.Sprintf("query%d word%d", i, i)
		r.discovered(scope, "k", q, nil)
		var used []string
		for j := range 2 * maxFamilyTools {
			used = append(used, fmt.Sprintf("ns:t%d", j))
		}
		r.used(scope, "k", used)
		clock.t = clock.t.Add(time.Second)
	}
	tr := r.tenant(scope, false)
	if len(tr.families) != maxFamilies || len(tr.recent) != 0 {
		t.Fatalf("%d families, %d recent", len(tr.families), len(tr.recent))
	}
	for _, f := range tr.families {
		if len(f.gain) > maxFamilyTools {
			t.Fatalf("a family of %d tools", len(f.gain))
		}
	}
	for i := range 2 * maxRecentDiscovers {
		r.discovered(scope, "k", fmt.Sprintf("another%d", i), nil)
	}
	if len(tr.recent) != maxRecentDiscovers {
		t.Fatalf("%d recent discovers", len(tr.recent))
	}
	for i := range 2 * maxRelevanceTenants {
		r.discovered(store.Scope{Org: fmt.Sprint(i), Project: "p"}, "k", "a query", nil)
	}
	if n := r.tenants.Len(); n != maxRelevanceTenants {
		t.Fatalf("%d tenants", n)
	}
}
