package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/store"
)

func runClientTools(t *testing.T, open func(t *testing.T) store.Store) {
	subtests(t, open, map[string]func(t *testing.T, s store.Store){
		"UnionReplaceAndScope": testClientTools,
		"Validation":           testClientToolsValidation,
		"ReportCap":            testClientToolsReportCap,
		"ClientCap":            testClientToolsClientCap,
		"ConcurrentClientCap":  testClientToolsConcurrentClientCap,
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
		if err := s.PutClientTools(t.Context(), acmeWeb, "c1", tools); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("report with %s: %v, want ErrInvalid", what, err)
		}
	}
	if err := s.PutClientTools(t.Context(), acmeWeb, "", nil); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("report without a client id: %v, want ErrInvalid", err)
	}
	// Rejected reports leave the previous one in place.
	sameStrings(t, "after rejected reports", toolIDs(must(s.ClientTools(t.Context(), acmeWeb)).of(t)), []string{"a:b"})
	// A tool listed twice in one report is stored once.
	noErr(t, s.PutClientTools(t.Context(), acmeWeb, "c1", []store.ClientTool{{ID: "d:d", Description: "1"}, {ID: "d:d", Description: "2"}}))
	sameStrings(t, "duplicate in one report", toolIDs(must(s.ClientTools(t.Context(), acmeWeb)).of(t)), []string{"d:d"})
}

func numberedTools(prefix string, n int) []store.ClientTool {
	out := make([]store.ClientTool, n)
	for i := range out {
		out[i] = store.ClientTool{ID: fmt.Sprintf("%s:t%d", prefix, i)}
	}
	return out
}

// A report over the cap is refused whole and leaves the previous one.
func testClientToolsReportCap(t *testing.T, s store.Store) {
	noErr(t, s.PutClientTools(t.Context(), acmeWeb, "laptop", numberedTools("a", store.MaxClientToolsPerReport)))
	err := s.PutClientTools(t.Context(), acmeWeb, "laptop", numberedTools("b", store.MaxClientToolsPerReport+1))
	if !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("report of %d tools: %v, want ErrInvalid", store.MaxClientToolsPerReport+1, err)
	}
	got := must(s.ClientTools(t.Context(), acmeWeb)).of(t)
	if len(got) != store.MaxClientToolsPerReport || got[0].ID[:2] != "a:" {
		t.Fatalf("after the refused report: %d tools, first %v", len(got), got[0].ID)
	}
	// Ten reports of one client leave one report's rows, not ten.
	for i := range 10 {
		noErr(t, s.PutClientTools(t.Context(), acmeWeb, "laptop", numberedTools(fmt.Sprintf("r%d", i), 100)))
	}
	if got := must(s.ClientTools(t.Context(), acmeWeb)).of(t); len(got) != 100 || got[0].ID[:3] != "r9:" {
		t.Fatalf("after ten reports of one client: %d tools", len(got))
	}
}

// clientsOf lists the clients whose one tool "<client>:t0" is stored.
func clientsOf(t *testing.T, s store.Store, sc store.Scope) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, tool := range must(s.ClientTools(t.Context(), sc)).of(t) {
		out[tool.ID[:len(tool.ID)-len(":t0")]] = true
	}
	return out
}

// A tenant keeps the reports of its most recently reporting clients only.
func testClientToolsClientCap(t *testing.T, s store.Store) {
	report := func(sc store.Scope, client string) {
		t.Helper()
		noErr(t, s.PutClientTools(t.Context(), sc, client, numberedTools(client, 1)))
		time.Sleep(time.Microsecond) // the next report gets a later timestamp
	}
	report(acmeAPI, "other-project")
	for i := range store.MaxClientsPerScope + 3 {
		report(acmeWeb, fmt.Sprintf("c%02d", i))
	}
	kept := clientsOf(t, s, acmeWeb)
	if len(kept) != store.MaxClientsPerScope || kept["c00"] || kept["c01"] || kept["c02"] || !kept["c03"] ||
		!kept[fmt.Sprintf("c%02d", store.MaxClientsPerScope+2)] {
		t.Fatalf("kept %d clients %v; want the %d latest", len(kept), kept, store.MaxClientsPerScope)
	}
	// Reporting again makes a client the latest: the next new client
	// evicts c04, not c03.
	report(acmeWeb, "c03")
	report(acmeWeb, "new")
	kept = clientsOf(t, s, acmeWeb)
	if len(kept) != store.MaxClientsPerScope || !kept["c03"] || kept["c04"] || !kept["new"] {
		t.Fatalf("after c03 re-reports and a new client: %v", kept)
	}
	// Another tenant's clients are neither counted nor evicted.
	if other := clientsOf(t, s, acmeAPI); !other["other-project"] {
		t.Fatalf("the other project's report was evicted: %v", other)
	}
}

// Concurrent reports of more clients than the cap leave exactly the cap.
func testClientToolsConcurrentClientCap(t *testing.T, s store.Store) {
	n := store.MaxClientsPerScope + writers
	for _, err := range parallel(n, func(i int) error {
		return s.PutClientTools(t.Context(), acmeWeb, fmt.Sprintf("c%03d", i), numberedTools(fmt.Sprintf("c%03d", i), 1))
	}) {
		t.Error(err)
	}
	if kept := clientsOf(t, s, acmeWeb); len(kept) != store.MaxClientsPerScope {
		t.Fatalf("%d concurrent clients left %d reports, want %d", n, len(kept), store.MaxClientsPerScope)
	}
}
