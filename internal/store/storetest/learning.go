package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/pml-go/pml/internal/store"
)

func runLearning(t *testing.T, open func(t *testing.T) store.Store) {
	subtests(t, open, map[string]func(t *testing.T, s store.Store){
		"CapabilityLearnedBeforeIsServedAsIs": testLearnedBefore,
		"UpdateLearnedFields":                 testUpdateLearned,
		"RecentRunsAreBounded":                testRecentRuns,
		"ToolEdgesAddUpPerTenant":             testToolEdges,
		"ToolEdgesAreBounded":                 testToolEdgesBounded,
		"ToolEdgesRefuseUnboundedIDs":         testToolEdgesInvalid,
	})
}

// A capability saved as before parameters were lifted (no output schema,
// no outcomes) reads back as it was saved.
func testLearnedBefore(t *testing.T, s store.Store) {
	c := must(s.SaveCapability(t.Context(), capability(acmeWeb, "cap", "old", `return await mcp.json.parse({data: "[1]"})`, store.VisibilityPrivate))).of(t)
	got := must(s.CapabilityByID(t.Context(), c.ID)).of(t)
	if got.ParamsLifted || got.OutputSchema != nil || got.RecentRuns != "" || got.Code != c.Code {
		t.Fatalf("old capability read back as %+v", got)
	}
}

func testUpdateLearned(t *testing.T, s store.Store) {
	c := capability(acmeWeb, "cap", "read", `return 1`, store.VisibilityPrivate)
	c.ArgsSchema = json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","default":"a"}}}`)
	c.ParamsLifted = true
	c.OutputSchema = json.RawMessage(`{"type":"number"}`)
	saved := must(s.SaveCapability(t.Context(), c)).of(t)
	if !saved.ParamsLifted {
		t.Fatal("ParamsLifted not saved")
	}
	sameJSON(t, "output schema", saved.OutputSchema, c.OutputSchema)
	saved.Code = `return args.path`
	saved.OutputSchema = json.RawMessage(`{"type":["number","string"]}`)
	noErr(t, s.UpdateLearned(t.Context(), saved))
	got := must(s.CapabilityByID(t.Context(), saved.ID)).of(t)
	if got.Code != saved.Code || !got.ParamsLifted || got.UsageCount != saved.UsageCount || got.Action != "read" {
		t.Fatalf("after update: %+v", got)
	}
	sameJSON(t, "output schema after update", got.OutputSchema, saved.OutputSchema)
	other := saved
	other.Scope = acmeAPI
	wantNotFound(t, s.UpdateLearned(t.Context(), other))
}

func testRecentRuns(t *testing.T, s store.Store) {
	c := must(s.SaveCapability(t.Context(), capability(acmeWeb, "cap", "runs", `return 2`, store.VisibilityPrivate))).of(t)
	for range 5 {
		noErr(t, s.RecordCapabilityRuns(t.Context(), c.ID, "1101"))
	}
	noErr(t, s.RecordCapabilityRuns(t.Context(), c.ID, "0"))
	got := must(s.CapabilityByID(t.Context(), c.ID)).of(t)
	if len(got.RecentRuns) != store.MaxRecentRuns || !strings.HasSuffix(got.RecentRuns, "0") {
		t.Fatalf("recent runs %q: want the last %d, newest last", got.RecentRuns, store.MaxRecentRuns)
	}
	if err := s.RecordCapabilityRuns(t.Context(), "no-such-id", "1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown id: %v, want ErrNotFound", err)
	}
	if err := s.RecordCapabilityRuns(t.Context(), c.ID, "1x"); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("a letter other than 0 and 1: %v, want ErrInvalid", err)
	}
}

func testToolEdges(t *testing.T, s store.Store) {
	noErr(t, s.AddToolEdges(t.Context(), acmeWeb, []store.ToolEdge{{From: "fs:read", To: "json:parse", Feeds: 1, Follows: 1}}))
	noErr(t, s.AddToolEdges(t.Context(), acmeWeb, []store.ToolEdge{
		{From: "fs:read", To: "json:parse", Feeds: 1, Follows: 1},
		{From: "json:parse", To: "crypto:sha256", Follows: 1},
	}))
	noErr(t, s.AddToolEdges(t.Context(), acmeAPI, []store.ToolEdge{{From: "a:b", To: "c:d", Follows: 7}}))
	got := must(s.ToolEdges(t.Context(), acmeWeb)).of(t)
	want := []store.ToolEdge{{From: "fs:read", To: "json:parse", Feeds: 2, Follows: 2}, {From: "json:parse", To: "crypto:sha256", Follows: 1}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("acme/web edges %v, want %v (another tenant's never)", got, want)
	}
}

func testToolEdgesBounded(t *testing.T, s store.Store) {
	heavy := store.ToolEdge{From: "h:x", To: "h:y", Follows: 1000}
	noErr(t, s.AddToolEdges(t.Context(), acmeWeb, []store.ToolEdge{heavy}))
	batch := make([]store.ToolEdge, 0, store.MaxToolEdges)
	for i := range store.MaxToolEdges {
		batch = append(batch, store.ToolEdge{From: fmt.Sprintf("n:a%d", i), To: "n:b", Follows: 1})
	}
	noErr(t, s.AddToolEdges(t.Context(), acmeWeb, batch))
	got := must(s.ToolEdges(t.Context(), acmeWeb)).of(t)
	if len(got) != store.MaxToolEdges || got[0] != heavy {
		t.Fatalf("%d edges, first %v: want %d with the heaviest kept", len(got), got[0], store.MaxToolEdges)
	}
}

func testToolEdgesInvalid(t *testing.T, s store.Store) {
	err := s.AddToolEdges(t.Context(), acmeWeb, []store.ToolEdge{{From: strings.Repeat("x", 300), To: "a:b", Follows: 1}})
	if !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("a 300-byte tool id: %v, want ErrInvalid", err)
	}
	noErr(t, s.AddToolEdges(t.Context(), acmeWeb, []store.ToolEdge{{From: "a:b", To: "c:d", Follows: 1}}))
}
