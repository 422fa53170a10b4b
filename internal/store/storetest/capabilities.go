package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/store"
)

func capability(sc store.Scope, ns, action, code string, vis store.Visibility) store.Capability {
	return store.Capability{
		Scope: sc, Namespace: ns, Action: action, Code: code, Visibility: vis,
		Description: "does " + action, Routing: "server", ToolsUsed: []string{"json:parse"},
	}
}

func runCapabilities(t *testing.T, open func(t *testing.T) store.Store) {
	subtests(t, open, map[string]func(t *testing.T, s store.Store){
		"SaveFillsDefaults":           testSaveFillsDefaults,
		"SaveDedupesByScopeAndHash":   testSaveDedupes,
		"ByID":                        testCapabilityByID,
		"VisibilityByName":            testVisibilityByName,
		"OwnScopePreferredOnClash":    testNamePreference,
		"LatestVersionByName":         testLatestVersion,
		"ListVisibilityAndPaging":     testListCapabilities,
		"UpdateAndRename":             testUpdateCapability,
		"UpdateOtherScopeNotFound":    testUpdateOtherScope,
		"InvalidCapabilityRejected":   testInvalidCapability,
		"RoundTripsEveryField":        testCapabilityRoundTrip,
		"SameCodeInOtherScopeIsNew":   testSameCodeOtherScope,
		"UsageCountGivenIsKept":       testUsageCountKept,
		"ListEmptyAndOffsetPastEnd":   testListEmpty,
		"ListOwnersApartCurrentOnly":  testListOwnersApart,
		"RenameKeepsOldNameForget":    testRenameAndForget,
		"ByNameUnknownIsNotFound":     testByNameUnknown,
		"UpdateUnknownIDIsNotFound":   testUpdateUnknown,
		"UpdateMakesNameFindable":     testUpdateVisibilityOpensAccess,
		"UpdateKeepsCodeAndCounters":  testUpdateKeepsRest,
		"IntentRunsCountItsOwnIntent": testIntentRuns,
	})
}

func testSaveFillsDefaults(t *testing.T, s store.Store) {
	c := must(s.SaveCapability(t.Context(), store.Capability{
		Scope: acmeWeb, Namespace: "fs", Action: "read_json", Code: "return 1",
	})).of(t)
	if c.ID == "" {
		t.Error("ID not generated")
	}
	if c.CodeHash != sha("return 1") {
		t.Errorf("CodeHash = %q, want SHA-256 hex of the code", c.CodeHash)
	}
	if c.Visibility != store.VisibilityPrivate {
		t.Errorf("Visibility = %q, want private by default", c.Visibility)
	}
	if c.UsageCount != 1 {
		t.Errorf("UsageCount = %d, want 1", c.UsageCount)
	}
	if c.ToolsUsed == nil || len(c.ToolsUsed) != 0 {
		t.Errorf("ToolsUsed = %#v, want an empty, non-nil list", c.ToolsUsed)
	}
	if !recent(c.CreatedAt) || !c.UpdatedAt.Equal(c.CreatedAt) {
		t.Errorf("CreatedAt = %v, UpdatedAt = %v, want both now", c.CreatedAt, c.UpdatedAt)
	}
	sameTime(t, "CreatedAt", c.CreatedAt, c.CreatedAt)
}

func testSaveDedupes(t *testing.T, s store.Store) {
	first := must(s.SaveCapability(t.Context(), capability(acmeWeb, "math", "sum", "return 1+1", store.VisibilityPrivate))).of(t)
	again := capability(acmeWeb, "other", "name", "return 1+1", store.VisibilityPublic)
	again.Description = "a different description"
	second := must(s.SaveCapability(t.Context(), again)).of(t)
	if second.ID != first.ID {
		t.Fatalf("same code saved twice in one scope gave IDs %q and %q", first.ID, second.ID)
	}
	if second.UsageCount != 2 {
		t.Errorf("UsageCount = %d, want 2", second.UsageCount)
	}
	if second.Namespace != "math" || second.Action != "sum" || second.Description != first.Description ||
		second.Visibility != store.VisibilityPrivate {
		t.Errorf("dedupe changed the stored capability: %+v", second)
	}
	sameTime(t, "UpdatedAt", second.UpdatedAt, first.UpdatedAt)
	third := must(s.SaveCapability(t.Context(), capability(acmeWeb, "math", "sum", "return 1+1", ""))).of(t)
	if third.UsageCount != 3 {
		t.Errorf("UsageCount after third save = %d, want 3", third.UsageCount)
	}
	if got := must(s.CapabilityByID(t.Context(), first.ID)).of(t); got.UsageCount != 3 {
		t.Errorf("stored UsageCount = %d, want 3", got.UsageCount)
	}
	_, total := must2(s.ListCapabilities(t.Context(), store.CapabilityFilter{Viewer: acmeWeb})).of(t)
	if total != 1 {
		t.Errorf("%d capabilities stored, want 1", total)
	}
}

func testSameCodeOtherScope(t *testing.T, s store.Store) {
	a := must(s.SaveCapability(t.Context(), capability(acmeWeb, "math", "sum", "return 2", ""))).of(t)
	b := must(s.SaveCapability(t.Context(), capability(globex, "math", "sum", "return 2", ""))).of(t)
	if a.ID == b.ID {
		t.Fatal("same code in two scopes was deduplicated across tenants")
	}
	if b.UsageCount != 1 || b.Scope != globex {
		t.Fatalf("second scope's capability = %+v, want a new one with UsageCount 1", b)
	}
}

func testUsageCountKept(t *testing.T, s store.Store) {
	c := capability(acmeWeb, "imp", "orted", "return 3", "")
	c.UsageCount = 7
	if got := must(s.SaveCapability(t.Context(), c)).of(t); got.UsageCount != 7 {
		t.Fatalf("UsageCount = %d, want the given 7", got.UsageCount)
	}
}

func testCapabilityByID(t *testing.T, s store.Store) {
	saved := must(s.SaveCapability(t.Context(), capability(globex, "git", "log", "return 'log'", store.VisibilityPrivate))).of(t)
	got := must(s.CapabilityByID(t.Context(), saved.ID)).of(t)
	if got.ID != saved.ID || got.Scope != globex || got.Code != "return 'log'" {
		t.Fatalf("CapabilityByID = %+v, want %+v", got, saved)
	}
	_, err := s.CapabilityByID(t.Context(), "no-such-id")
	wantNotFound(t, err)
}

func testCapabilityRoundTrip(t *testing.T, s store.Store) {
	in := store.Capability{
		ID: "cap-fixed-id", Scope: acmeAPI, Namespace: "fs", Action: "copy_tree",
		Description: "copies a tree", Code: "await mcp.fs.copy(args)", ToolsUsed: []string{"fs:copy", "fs:list"},
		Routing: "client", ArgsSchema: json.RawMessage(`{"type":"object", "properties":{"src":{"type":"string"}}}`),
		Visibility: store.VisibilityOrg,
	}
	saved := must(s.SaveCapability(t.Context(), in)).of(t)
	for _, got := range []store.Capability{saved, must(s.CapabilityByID(t.Context(), in.ID)).of(t)} {
		if got.ID != in.ID || got.Scope != in.Scope || got.Namespace != in.Namespace || got.Action != in.Action ||
			got.Description != in.Description || got.Code != in.Code || got.Routing != in.Routing ||
			got.Visibility != in.Visibility || got.CodeHash != sha(in.Code) {
			t.Fatalf("stored capability = %+v, want %+v", got, in)
		}
		sameStrings(t, "ToolsUsed", got.ToolsUsed, in.ToolsUsed)
		sameJSON(t, "ArgsSchema", got.ArgsSchema, in.ArgsSchema)
		sameTime(t, "CreatedAt", got.CreatedAt, saved.CreatedAt)
	}
}

// visibilityCase: who sees a capability of acme/web with that visibility.
func testVisibilityByName(t *testing.T, s store.Store) {
	sees := map[store.Visibility]map[store.Scope]bool{
		store.VisibilityPrivate: {acmeWeb: true, acmeAPI: false, globex: false},
		store.VisibilityProject: {acmeWeb: true, acmeAPI: false, globex: false},
		store.VisibilityOrg:     {acmeWeb: true, acmeAPI: true, globex: false},
		store.VisibilityPublic:  {acmeWeb: true, acmeAPI: true, globex: true},
	}
	for vis := range sees {
		must(s.SaveCapability(t.Context(), capability(acmeWeb, "vis", string(vis), "return '"+string(vis)+"'", vis))).of(t)
	}
	for vis, viewers := range sees {
		for viewer, want := range viewers {
			got, err := s.CapabilityByName(t.Context(), viewer, "vis", string(vis))
			switch {
			case want && err != nil:
				t.Errorf("%v cannot see a %s capability of %v: %v", viewer, vis, acmeWeb, err)
			case want && got.Action != string(vis):
				t.Errorf("%v looking up vis:%s got %+v", viewer, vis, got)
			case !want:
				if err == nil {
					t.Errorf("%v sees a %s capability of %v", viewer, vis, acmeWeb)
				} else {
					wantNotFound(t, err)
				}
			}
		}
	}
}

func testNamePreference(t *testing.T, s store.Store) {
	// One name, four owners: acme/web (private), acme/api (org), globex (public),
	// and a second public one in globex saved later.
	own := must(s.SaveCapability(t.Context(), capability(acmeWeb, "util", "fmt", "return 'web'", store.VisibilityPrivate))).of(t)
	sameOrg := must(s.SaveCapability(t.Context(), capability(acmeAPI, "util", "fmt", "return 'api'", store.VisibilityOrg))).of(t)
	public := must(s.SaveCapability(t.Context(), capability(globex, "util", "fmt", "return 'globex'", store.VisibilityPublic))).of(t)

	for _, tc := range []struct {
		viewer store.Scope
		want   string
	}{
		{acmeWeb, own.ID},     // own scope first, even though others are newer
		{acmeAPI, sameOrg.ID}, // its own
		{store.Scope{Org: "acme", Project: "docs"}, sameOrg.ID}, // same org before another org's public
		{globex, public.ID},
		{store.Scope{Org: "initech", Project: "x"}, public.ID}, // strangers see only public
	} {
		got, err := s.CapabilityByName(t.Context(), tc.viewer, "util", "fmt")
		if err != nil {
			t.Errorf("viewer %v: %v", tc.viewer, err)
			continue
		}
		if got.ID != tc.want {
			t.Errorf("viewer %v got %s (%v), want %s", tc.viewer, got.ID, got.Scope, tc.want)
		}
	}
}

func testLatestVersion(t *testing.T, s store.Store) {
	must(s.SaveCapability(t.Context(), capability(acmeWeb, "rep", "ort", "return 'v1'", ""))).of(t)
	v2 := must(s.SaveCapability(t.Context(), capability(acmeWeb, "rep", "ort", "return 'v2'", ""))).of(t)
	got := must(s.CapabilityByName(t.Context(), acmeWeb, "rep", "ort")).of(t)
	if got.ID != v2.ID {
		t.Fatalf("CapabilityByName = %q (%s), want the latest version %q", got.ID, got.Code, v2.ID)
	}
}

func testByNameUnknown(t *testing.T, s store.Store) {
	must(s.SaveCapability(t.Context(), capability(acmeWeb, "a", "b", "return 0", store.VisibilityPublic))).of(t)
	_, err := s.CapabilityByName(t.Context(), acmeWeb, "a", "c")
	wantNotFound(t, err)
	_, err = s.CapabilityByName(t.Context(), acmeWeb, "b", "a")
	wantNotFound(t, err)
}

func testListCapabilities(t *testing.T, s store.Store) {
	// acme/web: 5 private; acme/api: 1 org and 1 private; globex: 1 public and 1 private.
	for i := range 5 {
		must(s.SaveCapability(t.Context(), capability(acmeWeb, "web", fmt.Sprintf("a%d", i), fmt.Sprintf("return %d", i), ""))).of(t)
	}
	must(s.SaveCapability(t.Context(), capability(acmeAPI, "api", "shared", "return 'org'", store.VisibilityOrg))).of(t)
	must(s.SaveCapability(t.Context(), capability(acmeAPI, "api", "secret", "return 'p'", store.VisibilityPrivate))).of(t)
	must(s.SaveCapability(t.Context(), capability(globex, "gx", "open", "return 'pub'", store.VisibilityPublic))).of(t)
	must(s.SaveCapability(t.Context(), capability(globex, "gx", "closed", "return 'priv'", store.VisibilityPrivate))).of(t)

	names := func(cs []store.Capability) []string {
		out := make([]string, len(cs))
		for i, c := range cs {
			out[i] = c.Namespace + ":" + c.Action
		}
		return out
	}
	all, total := must2(s.ListCapabilities(t.Context(), store.CapabilityFilter{Viewer: acmeWeb})).of(t)
	if total != 7 {
		t.Errorf("acme/web total = %d, want 7", total)
	}
	sameStrings(t, "acme/web sees", names(all),
		[]string{"api:shared", "gx:open", "web:a0", "web:a1", "web:a2", "web:a3", "web:a4"})

	page, total := must2(s.ListCapabilities(t.Context(), store.CapabilityFilter{Viewer: acmeWeb, Limit: 3, Offset: 2})).of(t)
	if total != 7 {
		t.Errorf("paged total = %d, want 7", total)
	}
	sameStrings(t, "page 2..4", names(page), []string{"web:a0", "web:a1", "web:a2"})

	last, _ := must2(s.ListCapabilities(t.Context(), store.CapabilityFilter{Viewer: acmeWeb, Limit: 3, Offset: 6})).of(t)
	sameStrings(t, "last page", names(last), []string{"web:a4"})

	gx, total := must2(s.ListCapabilities(t.Context(), store.CapabilityFilter{Viewer: globex})).of(t)
	if total != 2 {
		t.Errorf("globex total = %d, want 2", total)
	}
	sameStrings(t, "globex sees", names(gx), []string{"gx:closed", "gx:open"})

	stranger, total := must2(s.ListCapabilities(t.Context(), store.CapabilityFilter{Viewer: store.Scope{Org: "initech", Project: "x"}})).of(t)
	if total != 1 {
		t.Errorf("stranger total = %d, want 1", total)
	}
	sameStrings(t, "stranger sees", names(stranger), []string{"gx:open"})
}

// Another org's public versions never push the viewer's own capabilities
// out of a listing: own org and other orgs are listed apart, each name once
// (its newest version), and other orgs' long code can be left out (issue 34
// finding 8).
func testListOwnersApart(t *testing.T, s store.Store) {
	must(s.SaveCapability(t.Context(), capability(acmeWeb, "web", "mine", "return 'mine'", store.VisibilityPrivate))).of(t)
	for i := range 5 {
		must(s.SaveCapability(t.Context(), capability(globex, "gx", "flood", fmt.Sprintf("return %d", i), store.VisibilityPublic))).of(t)
	}
	must(s.SaveCapability(t.Context(), capability(globex, "gx", "big", "return '"+strings.Repeat("x", 100)+"'", store.VisibilityPublic))).of(t)
	names := func(cs []store.Capability) []string {
		out := make([]string, len(cs))
		for i, c := range cs {
			out[i] = c.Namespace + ":" + c.Action + "=" + c.Code
		}
		return out
	}
	own, total := must2(s.ListCapabilities(t.Context(), store.CapabilityFilter{Viewer: acmeWeb, Owners: store.OwnOrg, Current: true, Limit: 1})).of(t)
	if total != 1 {
		t.Errorf("own total = %d, want 1", total)
	}
	sameStrings(t, "own org", names(own), []string{"web:mine=return 'mine'"})
	others, total := must2(s.ListCapabilities(t.Context(), store.CapabilityFilter{Viewer: acmeWeb, Owners: store.OtherOrgs, Current: true, MaxCodeChars: 50})).of(t)
	if total != 1 {
		t.Errorf("others total = %d, want 1", total)
	}
	sameStrings(t, "other orgs, current versions of short code", names(others), []string{"gx:flood=return 4"})
	every, total := must2(s.ListCapabilities(t.Context(), store.CapabilityFilter{Viewer: acmeWeb})).of(t)
	if total != 7 || len(every) != 7 {
		t.Errorf("every row: %d of total %d, want 7", len(every), total)
	}
}

// A rename moves every version and keeps the old name working for the
// project, after its own capabilities of that name; forgetting deletes
// every version and the old names (issue 35 section 3).
func testRenameAndForget(t *testing.T, s store.Store) {
	ctx := t.Context()
	old, renamed := store.CapabilityName{Namespace: "cap", Action: "old"}, store.CapabilityName{Namespace: "cap", Action: "renamed"}
	v1 := must(s.SaveCapability(ctx, capability(acmeWeb, "cap", "old", "return 1", store.VisibilityPrivate))).of(t)
	time.Sleep(2 * time.Millisecond)
	v2 := must(s.SaveCapability(ctx, capability(acmeWeb, "cap", "old", "return 2", store.VisibilityPrivate))).of(t)
	if err := s.RenameCapability(ctx, acmeWeb, old, renamed); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"old", "renamed"} {
		got, err := s.CapabilityByName(ctx, acmeWeb, "cap", name)
		if err != nil || got.ID != v2.ID || got.Action != "renamed" {
			t.Fatalf("by %s after the rename: %+v %v", name, got, err)
		}
	}
	if got := must(s.CapabilityByID(ctx, v1.ID)).of(t); got.Action != "renamed" {
		t.Fatalf("an older version kept the old name: %+v", got)
	}
	// Another project does not see the old name.
	if _, err := s.CapabilityByName(ctx, acmeAPI, "cap", "old"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("another project resolves the old name: %v", err)
	}
	// A rename of the renamed one takes the old name along; renaming back
	// makes the old name a name again.
	again := store.CapabilityName{Namespace: "cap", Action: "again"}
	if err := s.RenameCapability(ctx, acmeWeb, renamed, again); err != nil {
		t.Fatal(err)
	}
	if got, err := s.CapabilityByName(ctx, acmeWeb, "cap", "old"); err != nil || got.Action != "again" {
		t.Fatalf("by the first name after two renames: %+v %v", got, err)
	}
	if err := s.RenameCapability(ctx, acmeWeb, again, old); err != nil {
		t.Fatal(err)
	}
	if got, err := s.CapabilityByName(ctx, acmeWeb, "cap", "old"); err != nil || got.Action != "old" {
		t.Fatalf("renamed back: %+v %v", got, err)
	}
	if err := s.RenameCapability(ctx, acmeWeb, store.CapabilityName{Namespace: "cap", Action: "none"}, again); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("renaming a name the project lacks: %v", err)
	}
	if err := s.ForgetCapability(ctx, acmeWeb, old); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"old", "renamed", "again"} {
		if _, err := s.CapabilityByName(ctx, acmeWeb, "cap", name); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("%s after forget: %v", name, err)
		}
	}
	if err := s.ForgetCapability(ctx, acmeWeb, old); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("forgetting twice: %v", err)
	}
}

func testListEmpty(t *testing.T, s store.Store) {
	got, total := must2(s.ListCapabilities(t.Context(), store.CapabilityFilter{Viewer: acmeWeb})).of(t)
	if got == nil || len(got) != 0 || total != 0 {
		t.Fatalf("empty store lists %#v, total %d; want an empty non-nil list and 0", got, total)
	}
	must(s.SaveCapability(t.Context(), capability(acmeWeb, "a", "b", "return 0", ""))).of(t)
	got, total = must2(s.ListCapabilities(t.Context(), store.CapabilityFilter{Viewer: acmeWeb, Limit: 10, Offset: 5})).of(t)
	if len(got) != 0 || total != 1 {
		t.Fatalf("offset past the end lists %d, total %d; want 0 and 1", len(got), total)
	}
}

func testUpdateCapability(t *testing.T, s store.Store) {
	c := must(s.SaveCapability(t.Context(), capability(acmeWeb, "old", "name", "return 'x'", store.VisibilityPrivate))).of(t)
	time.Sleep(2 * time.Millisecond) // UpdatedAt must visibly move
	c.Namespace, c.Action, c.Description = "new", "title", "renamed"
	c.Visibility = store.VisibilityPublic
	c.ArgsSchema = json.RawMessage(`{"type":"object"}`)
	noErr(t, s.UpdateCapability(t.Context(), c))

	_, err := s.CapabilityByName(t.Context(), acmeWeb, "old", "name")
	wantNotFound(t, err)
	got := must(s.CapabilityByName(t.Context(), globex, "new", "title")).of(t)
	if got.ID != c.ID || got.Description != "renamed" || got.Visibility != store.VisibilityPublic {
		t.Fatalf("after update = %+v", got)
	}
	sameJSON(t, "ArgsSchema", got.ArgsSchema, c.ArgsSchema)
	if !got.UpdatedAt.After(got.CreatedAt) {
		t.Errorf("UpdatedAt %v not after CreatedAt %v", got.UpdatedAt, got.CreatedAt)
	}

	// ArgsSchema is replaced too: clearing it clears it.
	got.ArgsSchema = nil
	noErr(t, s.UpdateCapability(t.Context(), got))
	sameJSON(t, "cleared ArgsSchema", must(s.CapabilityByID(t.Context(), c.ID)).of(t).ArgsSchema, nil)
}

func testUpdateKeepsRest(t *testing.T, s store.Store) {
	c := must(s.SaveCapability(t.Context(), capability(acmeWeb, "k", "eep", "return 'keep'", ""))).of(t)
	c = must(s.SaveCapability(t.Context(), c)).of(t) // UsageCount 2
	edit := c
	edit.Description = "edited"
	edit.Code, edit.CodeHash, edit.UsageCount, edit.Routing = "return 'hacked'", sha("return 'hacked'"), 99, "client"
	edit.ToolsUsed = []string{"shell:exec"}
	noErr(t, s.UpdateCapability(t.Context(), edit))
	got := must(s.CapabilityByID(t.Context(), c.ID)).of(t)
	if got.Description != "edited" {
		t.Errorf("Description = %q, want edited", got.Description)
	}
	if got.Code != c.Code || got.CodeHash != c.CodeHash || got.UsageCount != 2 || got.Routing != c.Routing {
		t.Errorf("update touched immutable fields: %+v", got)
	}
	sameStrings(t, "ToolsUsed", got.ToolsUsed, c.ToolsUsed)
	sameTime(t, "CreatedAt", got.CreatedAt, c.CreatedAt)
}

func testUpdateVisibilityOpensAccess(t *testing.T, s store.Store) {
	c := must(s.SaveCapability(t.Context(), capability(acmeWeb, "sh", "are", "return 's'", store.VisibilityPrivate))).of(t)
	_, err := s.CapabilityByName(t.Context(), acmeAPI, "sh", "are")
	wantNotFound(t, err)
	c.Visibility = store.VisibilityOrg
	noErr(t, s.UpdateCapability(t.Context(), c))
	must(s.CapabilityByName(t.Context(), acmeAPI, "sh", "are")).of(t)
	_, err = s.CapabilityByName(t.Context(), globex, "sh", "are")
	wantNotFound(t, err)
}

func testUpdateOtherScope(t *testing.T, s store.Store) {
	c := must(s.SaveCapability(t.Context(), capability(acmeWeb, "mine", "only", "return 'm'", store.VisibilityPublic))).of(t)
	stolen := c
	stolen.Scope = globex
	stolen.Description = "taken over"
	wantNotFound(t, s.UpdateCapability(t.Context(), stolen))
	if got := must(s.CapabilityByID(t.Context(), c.ID)).of(t); got.Description != c.Description {
		t.Fatalf("another scope's update changed the description to %q", got.Description)
	}
}

func testUpdateUnknown(t *testing.T, s store.Store) {
	c := capability(acmeWeb, "a", "b", "return 0", store.VisibilityPrivate)
	c.ID = "missing"
	wantNotFound(t, s.UpdateCapability(t.Context(), c))
}

func testInvalidCapability(t *testing.T, s store.Store) {
	bad := map[string]store.Capability{
		"visibility":  capability(acmeWeb, "a", "b", "return 0", "everyone"),
		"args_schema": {Scope: acmeWeb, Namespace: "a", Action: "b", Code: "return 0", ArgsSchema: json.RawMessage(`{nope`)},
		"no action":   {Scope: acmeWeb, Namespace: "a", Code: "return 0"},
	}
	for what, c := range bad {
		if _, err := s.SaveCapability(t.Context(), c); err == nil {
			t.Errorf("capability with a bad %s was saved", what)
		}
	}
	good := must(s.SaveCapability(t.Context(), capability(acmeWeb, "a", "b", "return 0", ""))).of(t)
	good.Visibility = "everyone"
	if err := s.UpdateCapability(t.Context(), good); err == nil {
		t.Error("update to an unknown visibility accepted")
	}
	good.Visibility = ""
	if err := s.UpdateCapability(t.Context(), good); err == nil {
		t.Error("update to an empty visibility accepted")
	}
}

// testIntentRuns: a save of the same code counts an intent run only when
// its description is the stored one, in any case; a habit is that or a
// call by name.
func testIntentRuns(t *testing.T, s store.Store) {
	c := capability(acmeWeb, "logs", "errors", "return 'errors'", store.VisibilityPrivate)
	c.Description = "Pull the last hour of errors"
	first := must(s.SaveCapability(t.Context(), c)).of(t)
	if first.IntentRuns != 1 || first.Habit() {
		t.Fatalf("new capability: IntentRuns = %d, habit %v; want 1, false", first.IntentRuns, first.Habit())
	}
	other := c
	other.Description = "Count yesterday's failed deploys"
	if got := must(s.SaveCapability(t.Context(), other)).of(t); got.IntentRuns != 1 || got.UsageCount != 2 || got.Habit() {
		t.Errorf("another task's run: IntentRuns %d, UsageCount %d, habit %v; want 1, 2, false", got.IntentRuns, got.UsageCount, got.Habit())
	}
	same := c
	same.Description = "PULL the last hour of ERRORS"
	if got := must(s.SaveCapability(t.Context(), same)).of(t); got.IntentRuns != 2 || got.UsageCount != 3 || !got.Habit() {
		t.Errorf("its own intent again: IntentRuns %d, UsageCount %d, habit %v; want 2, 3, true", got.IntentRuns, got.UsageCount, got.Habit())
	}
	if got := must(s.CapabilityByID(t.Context(), first.ID)).of(t); got.IntentRuns != 2 {
		t.Errorf("stored IntentRuns = %d, want 2", got.IntentRuns)
	}
	called := capability(acmeWeb, "logs", "called", "return 'called'", store.VisibilityPrivate)
	saved := must(s.SaveCapability(t.Context(), called)).of(t)
	noErr(t, s.CountCapabilityUse(t.Context(), saved.ID))
	if got := must(s.CapabilityByID(t.Context(), saved.ID)).of(t); !got.Habit() {
		t.Errorf("a capability called by name once after its run is not a habit: %+v", got)
	}
}
