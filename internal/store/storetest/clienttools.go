package storetest

import (
	"encoding/json"
	"testing"

	"github.com/pml-go/pml/internal/store"
)

func runClientTools(t *testing.T, open func(t *testing.T) store.Store) {
	subtests(t, open, map[string]func(t *testing.T, s store.Store){
		"UnionReplaceAndScope": testClientTools,
		"Validation":           testClientToolsValidation,
	})
}

func toolIDs(ts []store.ClientTool) []string {
	out := make([]string, len(ts))
	for i, tool := range ts {
		out[i] = tool.ID
	}
	return out
}

func testClientTools(t *testing.T, s store.Store) {
	tool := func(id string) store.ClientTool {
		return store.ClientTool{ID: id, Description: "tool " + id, InputSchema: json.RawMessage(`{"type": "object"}`)}
	}
	empty := must(s.ClientTools(t.Context(), acmeWeb)).of(t)
	if empty == nil || len(empty) != 0 {
		t.Fatalf("no reports: ClientTools = %#v, want an empty non-nil list", empty)
	}
	noErr(t, s.PutClientTools(t.Context(), acmeWeb, "laptop", []store.ClientTool{tool("fs:read"), tool("git:log")}))
	noErr(t, s.PutClientTools(t.Context(), acmeWeb, "desktop", []store.ClientTool{tool("git:log"), tool("shell:exec")}))
	got := must(s.ClientTools(t.Context(), acmeWeb)).of(t)
	sameStrings(t, "union", toolIDs(got), []string{"fs:read", "git:log", "shell:exec"})
	sameJSON(t, "InputSchema", got[0].InputSchema, tool("fs:read").InputSchema)
	if got[0].Description != "tool fs:read" {
		t.Errorf("Description = %q", got[0].Description)
	}

	// A new report replaces that client's previous one, not the others'.
	noErr(t, s.PutClientTools(t.Context(), acmeWeb, "laptop", []store.ClientTool{{ID: "docker:ps"}}))
	sameStrings(t, "after laptop re-reports", toolIDs(must(s.ClientTools(t.Context(), acmeWeb)).of(t)),
		[]string{"docker:ps", "git:log", "shell:exec"})
	noErr(t, s.PutClientTools(t.Context(), acmeWeb, "desktop", nil))
	only := must(s.ClientTools(t.Context(), acmeWeb)).of(t)
	sameStrings(t, "after desktop reports nothing", toolIDs(only), []string{"docker:ps"})
	sameJSON(t, "absent InputSchema", only[0].InputSchema, nil)

	// The same tool from two clients appears once, with the latest description.
	noErr(t, s.PutClientTools(t.Context(), acmeWeb, "desktop", []store.ClientTool{{ID: "docker:ps", Description: "newer"}}))
	both := must(s.ClientTools(t.Context(), acmeWeb)).of(t)
	if len(both) != 1 {
		t.Fatalf("one tool from two clients listed %d times", len(both))
	}

	// Scopes are separate even for the same client ID.
	sameStrings(t, "another project", toolIDs(must(s.ClientTools(t.Context(), acmeAPI)).of(t)), []string{})
	noErr(t, s.PutClientTools(t.Context(), globex, "laptop", []store.ClientTool{{ID: "k8s:get"}}))
	sameStrings(t, "globex", toolIDs(must(s.ClientTools(t.Context(), globex)).of(t)), []string{"k8s:get"})
	sameStrings(t, "acme unaffected", toolIDs(must(s.ClientTools(t.Context(), acmeWeb)).of(t)), []string{"docker:ps"})
}

func testClientToolsValidation(t *testing.T, s store.Store) {
	noErr(t, s.PutClientTools(t.Context(), acmeWeb, "c1", []store.ClientTool{{ID: "a:b"}}))
	for what, tools := range map[string][]store.ClientTool{
		"empty tool id": {{ID: ""}},
		"bad schema":    {{ID: "x:y", InputSchema: json.RawMessage(`[`)}},
	} {
		if err := s.PutClientTools(t.Context(), acmeWeb, "c1", tools); err == nil {
			t.Errorf("report with %s accepted", what)
		}
	}
	if err := s.PutClientTools(t.Context(), acmeWeb, "", nil); err == nil {
		t.Error("report without a client id accepted")
	}
	// Rejected reports leave the previous one in place.
	sameStrings(t, "after rejected reports", toolIDs(must(s.ClientTools(t.Context(), acmeWeb)).of(t)), []string{"a:b"})
	// A tool listed twice in one report is stored once.
	noErr(t, s.PutClientTools(t.Context(), acmeWeb, "c1", []store.ClientTool{{ID: "d:d", Description: "1"}, {ID: "d:d", Description: "2"}}))
	sameStrings(t, "duplicate in one report", toolIDs(must(s.ClientTools(t.Context(), acmeWeb)).of(t)), []string{"d:d"})
}
