package workspace

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/upstream"
	"github.com/pml-go/pml/internal/wire"
)

// itemKeys are the keys the api_key items of a answer ask for, by type.
func itemsByType(t *testing.T, a wire.Answer) map[string][]map[string]any {
	t.Helper()
	out := map[string][]map[string]any{}
	for _, it := range items(t, a) {
		typ, _ := it["type"].(string)
		out[typ] = append(out[typ], it)
	}
	return out
}

func keysOf(it map[string]any) []string {
	var out []string
	for _, k := range it["keys"].([]any) {
		out = append(out, k.(string))
	}
	return out
}

// A catalog server that needs a key is never installed or started without
// it, even when its namespace is allowed: the first execute asks for the
// install and the key together, the key once per server however many tools
// use it, and the literal values of its configured environment are config
// passed as they are, never asked for.
func TestCatalogServerAsksInstallAndKeyBeforeFirstRun(t *testing.T) {
	e := newApprovalEnv(t, `{"permissions": {"allow": ["mem"]}}`, nil)
	e.pkg = e.open(map[string]gateway.ServerEntry{"mem": {ServerConfig: upstream.ServerConfig{Command: e.bin,
		Env: map[string]string{"SECRET_FOR_TEST": "${MEM_TEST_TOKEN}", "LITERAL_FOR_TEST": "/tmp/mem.jsonl"}}}})
	code := `await mcp.mem.echo({text: "x"}); return await mcp.mem.env({name: "LITERAL_FOR_TEST"})`

	a := e.exec(code)
	wantStatus(t, a, wire.StatusApprovalRequired)
	by := itemsByType(t, a)
	if len(by["dependency"]) != 1 || len(by["api_key_required"]) != 1 || len(by) != 2 {
		t.Fatalf("items %+v", by)
	}
	if k := keysOf(by["api_key_required"][0]); !slices.Equal(k, []string{"MEM_TEST_TOKEN"}) {
		t.Fatalf("keys %v", k)
	}
	if _, err := os.Stat(filepath.Join(e.ws, StateDir, "deps.json")); !os.IsNotExist(err) {
		t.Fatalf("installed before the approval: %v", err)
	}

	// Approved without the key: installed, but it does not run; the key is
	// asked for again, named once.
	b := e.cont(a.WorkflowID, true)
	wantStatus(t, b, wire.StatusApprovalRequired)
	if b.ApprovalType != "api_key_required" {
		t.Fatalf("%+v", b)
	}
	by = itemsByType(t, b)
	if len(by["api_key_required"]) != 1 || !slices.Equal(keysOf(by["api_key_required"][0]), []string{"MEM_TEST_TOKEN"}) {
		t.Fatalf("items %+v", by)
	}

	// `pml exec --approve` stops at the missing key with API_KEY_REQUIRED.
	stop := e.pkg.ExecuteApproving(t.Context(), wire.ExecuteRequest{Code: code}, func([]string) {})
	if stop.ErrorCode != pmlerr.APIKeyRequired {
		t.Fatalf("%+v", stop)
	}

	if err := os.WriteFile(filepath.Join(e.ws, ".env"), []byte("MEM_TEST_TOKEN=k3y-value\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ok := e.cont(b.WorkflowID, true)
	wantStatus(t, ok, wire.StatusSuccess)
	if string(ok.Result) != `"/tmp/mem.jsonl"` {
		t.Fatalf("the literal value did not reach the server: %s", ok.Result)
	}
	// The next execute runs at once.
	wantStatus(t, e.exec(code), wire.StatusSuccess)
}

// A call to a tool the built-in namespace does not have is UNKNOWN_TOOL,
// naming the nearest tools, before any approval is asked; the next execute
// still asks and runs as before.
func TestUnknownBuiltinToolRefusedBeforeApproval(t *testing.T) {
	e := newApprovalEnv(t, `{"permissions": {"ask": ["filesystem"]}}`, nil)
	a := e.exec(`return await mcp.filesystem.read_fil({path: "x"})`)
	if a.Status != wire.StatusError || a.ErrorCode != pmlerr.UnknownTool {
		t.Fatalf("%+v", a)
	}
	sugg, _ := a.Details["suggestions"].([]string)
	if !slices.Contains(sugg, "filesystem:read_file") {
		t.Fatalf("suggestions %#v in %+v", a.Details["suggestions"], a)
	}
	if decls, _ := a.Details["declarations"].([]string); !slices.ContainsFunc(decls, func(d string) bool {
		return strings.HasPrefix(d, "mcp.filesystem.read_file(args: {")
	}) {
		t.Fatalf("declarations %#v in %+v", a.Details["declarations"], a)
	}
	if err := os.WriteFile(filepath.Join(e.ws, "x"), []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	b := e.exec(`return await mcp.filesystem.read_file({path: "x"})`)
	wantStatus(t, b, wire.StatusApprovalRequired)
	if b.ApprovalType != "tool_permission" {
		t.Fatalf("%+v", b)
	}
	wantStatus(t, e.cont(b.WorkflowID, true), wire.StatusSuccess)
}

// A call to a namespace nobody serves (not this machine, not the gateway,
// not the catalog) is UNKNOWN_TOOL before any approval is asked, and
// nothing before it runs; a gateway tool in an "ask" plan is still asked for.
func TestUnknownNamespaceRefusedBeforeApproval(t *testing.T) {
	e := newApprovalEnv(t, `{"permissions": {"ask": ["nosuch", "math", "filesystem"]}}`, nil)
	for _, code := range []string{
		`return await mcp.nosuch.thing({})`,
		`await mcp.filesystem.write_file({path: "ran.txt", content: "x"}); return await mcp.nosuch.thing({})`,
		`return await mcp.math.ad({a: 1, b: 2})`,
	} {
		a := e.exec(code)
		if a.Status != wire.StatusError || a.ErrorCode != pmlerr.UnknownTool || a.WorkflowID != "" {
			t.Fatalf("%s: %+v", code, a)
		}
		if _, ok := a.Details["suggestions"].([]string); !ok {
			t.Fatalf("%s: no suggestions in %+v", code, a)
		}
	}
	ad := e.exec(`return await mcp.math.ad({a: 1, b: 2})`)
	if sugg, _ := ad.Details["suggestions"].([]string); !slices.Contains(sugg, "math:add") {
		t.Fatalf("suggestions %v", sugg)
	}
	// The nearest tools come declared: the AI client needs no discover.
	if decls, _ := ad.Details["declarations"].([]string); !slices.ContainsFunc(decls, func(d string) bool {
		return strings.HasPrefix(d, "mcp.math.add(args: { a: number; b: number })")
	}) {
		t.Fatalf("declarations %#v", ad.Details["declarations"])
	}
	if _, err := os.Stat(filepath.Join(e.ws, "ran.txt")); !os.IsNotExist(err) {
		t.Fatalf("a tool ran before the refusal: %v", err)
	}
	b := e.exec(`return await mcp.math.add({a: 1, b: 2})`)
	wantStatus(t, b, wire.StatusApprovalRequired)
	if c := e.cont(b.WorkflowID, true); c.Status != wire.StatusSuccess || string(c.Result) != "3" {
		t.Fatalf("%+v", c)
	}
}
