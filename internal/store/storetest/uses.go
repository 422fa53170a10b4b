package storetest

import (
	"errors"
	"testing"

	"github.com/pml-go/pml/internal/store"
)

func runUses(t *testing.T, open func(t *testing.T) store.Store) {
	subtests(t, open, map[string]func(t *testing.T, s store.Store){
		"CountedPerCallNotPerSave": testUsesCounted,
		"UnknownIDIsNotFound":      testUsesUnknown,
		"ParallelCallsAllCount":    testUsesParallel,
	})
}

// Uses counts calls only: a new capability has none, saving the same code
// again counts a save (UsageCount), not a call, and counting changes no
// other field.
func testUsesCounted(t *testing.T, s store.Store) {
	c := must(s.SaveCapability(t.Context(), capability(acmeWeb, "cap", "sum", "return 1", store.VisibilityPrivate))).of(t)
	if c.Uses != 0 {
		t.Fatalf("new capability Uses = %d, want 0", c.Uses)
	}
	other := must(s.SaveCapability(t.Context(), capability(acmeWeb, "cap", "other", "return 2", store.VisibilityPrivate))).of(t)
	for range 3 {
		noErr(t, s.CountCapabilityUse(t.Context(), c.ID))
	}
	again := must(s.SaveCapability(t.Context(), capability(acmeWeb, "cap", "sum", "return 1", store.VisibilityPrivate))).of(t)
	if again.Uses != 3 || again.UsageCount != 2 {
		t.Fatalf("after 3 calls and a second save: Uses %d, UsageCount %d; want 3 and 2", again.Uses, again.UsageCount)
	}
	got := must(s.CapabilityByID(t.Context(), c.ID)).of(t)
	if got.Uses != 3 || !got.UpdatedAt.Equal(c.UpdatedAt) || got.Description != c.Description {
		t.Fatalf("stored after calls: %+v, want Uses 3 and the rest unchanged from %+v", got, c)
	}
	if byName := must(s.CapabilityByName(t.Context(), acmeWeb, "cap", "sum")).of(t); byName.Uses != 3 {
		t.Fatalf("by name: Uses %d, want 3", byName.Uses)
	}
	list, _ := must2(s.ListCapabilities(t.Context(), store.CapabilityFilter{Viewer: acmeWeb})).of(t)
	uses := map[string]int64{}
	for _, x := range list {
		uses[x.ID] = x.Uses
	}
	if uses[c.ID] != 3 || uses[other.ID] != 0 {
		t.Fatalf("listed uses: %v, want %s:3 %s:0", uses, c.ID, other.ID)
	}
}

func testUsesUnknown(t *testing.T, s store.Store) {
	if err := s.CountCapabilityUse(t.Context(), "no-such-id"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown id: %v, want ErrNotFound", err)
	}
	// The store still serves the next request.
	c := must(s.SaveCapability(t.Context(), capability(acmeWeb, "cap", "sum", "return 1", store.VisibilityPrivate))).of(t)
	noErr(t, s.CountCapabilityUse(t.Context(), c.ID))
}

func testUsesParallel(t *testing.T, s store.Store) {
	c := must(s.SaveCapability(t.Context(), capability(acmeWeb, "cap", "sum", "return 1", store.VisibilityPrivate))).of(t)
	if errs := parallel(writers, func(int) error { return s.CountCapabilityUse(t.Context(), c.ID) }); len(errs) > 0 {
		t.Fatal(errors.Join(errs...))
	}
	if got := must(s.CapabilityByID(t.Context(), c.ID)).of(t); got.Uses != writers {
		t.Fatalf("Uses after %d parallel calls = %d", writers, got.Uses)
	}
}
