package storetest

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/store"
)

func runRelevance(t *testing.T, open func(t *testing.T) store.Store) {
	subtests(t, open, map[string]func(t *testing.T, s store.Store){
		"SeenDiscoversAreTakenOnce":       testSeenDiscovers,
		"SeenDiscoversAreBounded":         testSeenDiscoversBounded,
		"ToolRelevanceUpserts":            testToolRelevance,
		"ToolRelevanceIsBounded":          testToolRelevanceBounded,
		"LearningFromUseRefusesUnbounded": testRelevanceInvalid,
	})
}

// at is a time the store keeps exactly (microseconds, UTC).
func at(minute int) time.Time {
	return time.Date(2026, 3, 1, 12, minute, 0, 0, time.UTC)
}

func testSeenDiscovers(t *testing.T, s store.Store) {
	ctx := t.Context()
	noErr(t, s.AddSeenDiscover(ctx, acmeWeb, store.SeenDiscover{Caller: "key:1", Family: "read spreadsheet", Shown: []string{"excel:read", "fs:read"}, At: at(1)}))
	noErr(t, s.AddSeenDiscover(ctx, acmeWeb, store.SeenDiscover{Caller: "key:1", Family: "post slack", At: at(5)}))
	noErr(t, s.AddSeenDiscover(ctx, acmeWeb, store.SeenDiscover{Caller: "key:2", Family: "post slack", At: at(5)}))
	noErr(t, s.AddSeenDiscover(ctx, acmeAPI, store.SeenDiscover{Caller: "key:1", Family: "post slack", At: at(5)}))
	got := must(s.TakeSeenDiscovers(ctx, acmeWeb, "key:1", at(0))).of(t)
	if len(got) != 2 || got[0].Family != "read spreadsheet" || !slices.Equal(got[0].Shown, []string{"excel:read", "fs:read"}) ||
		!got[0].At.Equal(at(1)) || got[1].Family != "post slack" || len(got[1].Shown) != 0 || got[1].Caller != "key:1" {
		t.Fatalf("taken %+v", got)
	}
	if again := must(s.TakeSeenDiscovers(ctx, acmeWeb, "key:1", at(0))).of(t); len(again) != 0 {
		t.Fatalf("taken twice: %+v", again)
	}
	noErr(t, s.AddSeenDiscover(ctx, acmeWeb, store.SeenDiscover{Caller: "key:2", Family: "old", At: at(0)}))
	if got := must(s.TakeSeenDiscovers(ctx, acmeWeb, "key:2", at(2))).of(t); len(got) != 1 || got[0].Family != "post slack" {
		t.Fatalf("since minute 2: %+v", got)
	}
}

func testSeenDiscoversBounded(t *testing.T, s store.Store) {
	for i := range store.MaxSeenDiscovers + 5 {
		noErr(t, s.AddSeenDiscover(t.Context(), acmeWeb, store.SeenDiscover{Caller: "k", Family: fmt.Sprint("f", i), At: at(0).Add(time.Duration(i) * time.Second)}))
	}
	got := must(s.TakeSeenDiscovers(t.Context(), acmeWeb, "k", at(0))).of(t)
	if len(got) != store.MaxSeenDiscovers || got[0].Family != "f5" {
		t.Fatalf("%d kept, oldest %+v: want the %d newest", len(got), got[0], store.MaxSeenDiscovers)
	}
}

func testToolRelevance(t *testing.T, s store.Store) {
	ctx := t.Context()
	noErr(t, s.PutToolRelevance(ctx, acmeWeb, []store.ToolRelevance{
		{Family: "read spreadsheet", Tool: "excel:read", Gain: 1, UpdatedAt: at(1)},
		{Family: "read spreadsheet", Tool: "fs:read", Gain: 0.5, UpdatedAt: at(1)},
	}))
	noErr(t, s.PutToolRelevance(ctx, acmeWeb, []store.ToolRelevance{
		{Family: "read spreadsheet", Tool: "excel:read", Gain: 1.75, UpdatedAt: at(2)},
		{Family: "read spreadsheet", Tool: "fs:read", Gain: 0, UpdatedAt: at(2)}, // deleted
	}))
	got := must(s.ToolRelevance(ctx, acmeWeb)).of(t)
	if len(got) != 1 || got[0].Tool != "excel:read" || got[0].Gain != 1.75 || !got[0].UpdatedAt.Equal(at(2)) {
		t.Fatalf("relevance %+v", got)
	}
	if other := must(s.ToolRelevance(ctx, acmeAPI)).of(t); len(other) != 0 {
		t.Fatalf("another tenant's: %+v", other)
	}
}

func testToolRelevanceBounded(t *testing.T, s store.Store) {
	batch := make([]store.ToolRelevance, 0, store.MaxToolRelevance)
	for i := range store.MaxToolRelevance {
		batch = append(batch, store.ToolRelevance{Family: "old", Tool: fmt.Sprintf("n:t%d", i), Gain: 1, UpdatedAt: at(1)})
	}
	noErr(t, s.PutToolRelevance(t.Context(), acmeWeb, batch))
	noErr(t, s.PutToolRelevance(t.Context(), acmeWeb, []store.ToolRelevance{{Family: "new", Tool: "n:x", Gain: 1, UpdatedAt: at(2)}}))
	got := must(s.ToolRelevance(t.Context(), acmeWeb)).of(t)
	if len(got) != store.MaxToolRelevance || !slices.ContainsFunc(got, func(r store.ToolRelevance) bool { return r.Family == "new" }) {
		t.Fatalf("%d rows: want %d with the newest kept", len(got), store.MaxToolRelevance)
	}
}

func testRelevanceInvalid(t *testing.T, s store.Store) {
	ctx := t.Context()
	for name, err := range map[string]error{
		"a long family":       s.AddSeenDiscover(ctx, acmeWeb, store.SeenDiscover{Caller: "k", Family: strings.Repeat("x", store.MaxFamilyBytes+1), At: at(1)}),
		"too many shown":      s.AddSeenDiscover(ctx, acmeWeb, store.SeenDiscover{Caller: "k", Family: "f", Shown: make([]string, store.MaxShown+1), At: at(1)}),
		"a long tool id":      s.PutToolRelevance(ctx, acmeWeb, []store.ToolRelevance{{Family: "f", Tool: strings.Repeat("x", 300), Gain: 1, UpdatedAt: at(1)}}),
		"a gain of no number": s.PutToolRelevance(ctx, acmeWeb, []store.ToolRelevance{{Family: "f", Tool: "a:b", Gain: math.NaN(), UpdatedAt: at(1)}}),
	} {
		if !errors.Is(err, store.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
}
