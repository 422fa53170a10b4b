package learning

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/store/sqlite"
)

// fakeClock is a test's clock.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

// relevanceBackends runs f against learning from use in memory and in a
// SQLite store (the store suite runs the same calls on PostgreSQL).
func relevanceBackends(t *testing.T, f func(t *testing.T, r func() *relevance, clock *fakeClock)) {
	now := func(clock *fakeClock) func() time.Time { return clock.now }
	t.Run("memory", func(t *testing.T) {
		clock := &fakeClock{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
		r := newRelevance(nil, nil, now(clock), slog.New(slog.DiscardHandler), false)
		f(t, func() *relevance { return r }, clock)
	})
	t.Run("store", func(t *testing.T) {
		st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "pml.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		clock := &fakeClock{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
		sync := func(work func(context.Context)) bool { work(t.Context()); return true }
		// Each call is another replica: nothing cached, all from the store.
		f(t, func() *relevance { return newRelevance(st, sync, now(clock), slog.New(slog.DiscardHandler), false) }, clock)
	})
}

func TestRelevanceLearnsFromUse(t *testing.T) {
	relevanceBackends(t, func(t *testing.T, r func() *relevance, clock *fakeClock) {
		ctx := t.Context()
		acme, other := store.Scope{Org: "acme", Project: "p"}, store.Scope{Org: "other", Project: "p"}
		const q = "save the quarterly report as a spreadsheet"

		r().discovered(acme, "key:1", q, []string{"fs:write_file", "excel:write"})
		clock.t = clock.t.Add(time.Minute)
		r().used(acme, "key:2", []string{"excel:write"}) // another caller's run teaches nothing
		if b := r().boost(ctx, acme, q); b != nil {
			t.Fatalf("another caller's run taught %v", b)
		}
		r().used(acme, "key:1", []string{"excel:write"})
		b := r().boost(ctx, acme, "save the quarterly report into a spreadsheet")
		if b["excel:write"] <= 0 || b["fs:write_file"] != 0 {
			t.Fatalf("the family's boost %v", b)
		}
		if b := r().boost(ctx, acme, "list the open pull requests"); b != nil {
			t.Fatalf("an unrelated query moved: %v", b)
		}
		if b := r().boost(ctx, other, q); b != nil {
			t.Fatalf("another tenant learned %v", b)
		}

		// A discover teaches once; a run past the window teaches nothing.
		r().used(acme, "key:1", []string{"excel:write"})
		if got := r().boost(ctx, acme, q)["excel:write"]; got != b["excel:write"] {
			t.Fatalf("taught twice: %v then %v", b["excel:write"], got)
		}
		r().discovered(acme, "key:1", q, nil)
		clock.t = clock.t.Add(feedbackWindow + time.Second)
		r().used(acme, "key:1", []string{"excel:write"})
		if got := r().boost(ctx, acme, q)["excel:write"]; got > b["excel:write"] {
			t.Fatalf("a late run taught: %v then %v", b["excel:write"], got)
		}

		// It decays: half after a half-life.
		before := r().boost(ctx, acme, q)["excel:write"]
		clock.t = clock.t.Add(relevanceHalfLife)
		if after := r().boost(ctx, acme, q)["excel:write"]; after < before*0.49 || after > before*0.51 {
			t.Fatalf("after a half-life %v, before %v", after, before)
		}

		// Shown and not called loses what it had.
		for range 3 {
			r().discovered(acme, "key:1", q, []string{"excel:write"})
			r().used(acme, "key:1", []string{"fs:write_file"})
		}
		if got := r().boost(ctx, acme, q); got["fs:write_file"] <= got["excel:write"] {
			t.Fatalf("after runs that used another tool: %v", got)
		}
	})
}

func TestRelevanceIsBounded(t *testing.T) {
	clock := &fakeClock{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	r := newRelevance(nil, nil, clock.now, slog.New(slog.DiscardHandler), false)
	scope := store.Scope{Org: "acme", Project: "p"}
	for i := range 2 * maxFamilies {
		r.discovered(scope, "k", fmt.Sprintf("query%d word%d", i, i), nil)
		var used []string
		for j := range 2 * maxFamilyTools {
			used = append(used, fmt.Sprintf("ns:t%d", j))
		}
		r.used(scope, "k", used)
		clock.t = clock.t.Add(time.Second)
	}
	tr, _ := r.mem.Get(scope)
	if len(tr.families) != maxFamilies || len(tr.recent) != 0 {
		t.Fatalf("%d families, %d recent", len(tr.families), len(tr.recent))
	}
	for _, f := range tr.families {
		if len(f.tools) > maxFamilyTools {
			t.Fatalf("a family of %d tools", len(f.tools))
		}
	}
	for i := range 2 * store.MaxSeenDiscovers {
		r.discovered(scope, "k", fmt.Sprintf("another%d", i), nil)
	}
	if len(tr.recent) != store.MaxSeenDiscovers {
		t.Fatalf("%d recent discovers", len(tr.recent))
	}
	for i := range 2 * maxRelevanceTenants {
		r.discovered(store.Scope{Org: fmt.Sprint(i), Project: "p"}, "k", "a query", nil)
	}
	if n := r.mem.Len(); n != maxRelevanceTenants {
		t.Fatalf("%d tenants", n)
	}
}

// takeCounter counts the store's takes of seen discovers.
type takeCounter struct {
	store.Store
	takes int
}

func (c *takeCounter) TakeSeenDiscovers(ctx context.Context, sc store.Scope, caller string, since time.Time) ([]store.SeenDiscover, error) {
	c.takes++
	return c.Store.TakeSeenDiscovers(ctx, sc, caller, since)
}

// With OwnDiscovers (local mode), a run asks the store for its caller's
// discovers only when this process noted one since it last asked: the runs
// after that ask nothing, and still learn from the next discover. Without
// it, every run asks, since another replica may have noted one.
func TestRelevanceOwnDiscoversAskTheStoreOnlyAfterADiscover(t *testing.T) {
	for _, own := range []bool{true, false} {
		t.Run(fmt.Sprint("own=", own), func(t *testing.T) {
			st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "pml.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = st.Close() })
			counter := &takeCounter{Store: st}
			clock := &fakeClock{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
			sync := func(work func(context.Context)) bool { work(t.Context()); return true }
			r := newRelevance(counter, sync, clock.now, slog.New(slog.DiscardHandler), own)
			acme := store.Scope{Org: "acme", Project: "p"}
			const q = "save the quarterly report as a spreadsheet"

			for range 3 {
				r.used(acme, "", []string{"fs:read_file"})
			}
			want := 1
			if !own {
				want = 3
			}
			if counter.takes != want {
				t.Errorf("three runs with no discover asked the store %d times, want %d", counter.takes, want)
			}
			r.discovered(acme, "", q, []string{"excel:write"})
			r.used(acme, "", []string{"excel:write"})
			if b := r.boost(t.Context(), acme, q); b["excel:write"] <= 0 {
				t.Fatalf("the run after a discover did not learn: %v", b)
			}
			before := counter.takes
			r.used(acme, "", []string{"excel:write"})
			want = 0
			if !own {
				want = 1
			}
			if n := counter.takes - before; n != want {
				t.Errorf("a run after the discover was taken asked the store %d times, want %d", n, want)
			}
		})
	}
}
