package workspace

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/pmlerr"
)

// An exposed capability is a tool of its own with the capability's
// description and schema, and calling it runs it like execute; an unknown
// name is skipped and the server serves on.
func TestExposedCapabilityTool(t *testing.T) {
	e := capEnv(t)
	e.learnLocal(readCap, "shout a file")
	const id = "cap:shout_file"
	cfg := `{"permissions": {"allow": ["filesystem", "cap", "json"]}, "expose": ["` + id + `", "cap:nothing_like_it"]}`
	if err := os.WriteFile(filepath.Join(e.ws, ConfigFile), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s := connectInMemory(t, e.pkg.NewMCPServer(), nil)
	name := exposedToolName(id)
	list, err := s.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got *mcp.Tool
	for _, tl := range list.Tools {
		if tl.Name == name {
			got = tl
		}
		if tl.Name == "cap.nothing_like_it" {
			t.Fatalf("unknown capability listed: %+v", tl)
		}
	}
	if got == nil {
		t.Fatalf("%s not in tools/list: %+v", name, list.Tools)
	}
	schema, _ := json.Marshal(got.InputSchema)
	if got.Description == "" || !json.Valid(schema) || string(schema) == "null" {
		t.Fatalf("exposed tool: %+v %s", got, schema)
	}
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{"path": "note.txt"}})
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	_ = json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &out)
	if res.IsError || out["status"] != "success" || out["result"] != "HELLO" {
		t.Fatalf("call: %v", out)
	}
	// A failing call is an error answer, and the next one works.
	res, err = s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{"path": "missing.txt"}})
	if err != nil || !res.IsError {
		t.Fatalf("missing file: %+v %v", res, err)
	}
	// Removed from the config, it leaves tools/list.
	if err := os.WriteFile(filepath.Join(e.ws, ConfigFile), []byte(`{"permissions": {"allow": ["filesystem", "cap", "json"]}, "expose": []}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	list, err = s.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range list.Tools {
		if tl.Name == name {
			t.Fatalf("%s still listed", name)
		}
	}
	if _, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "discover", Arguments: map[string]any{"query": "shout"}}); err != nil {
		t.Fatal(err)
	}
}

// A malformed expose entry is INVALID_CONFIG, from the file or the flag.
func TestExposeRefusesBadNames(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ConfigFile)
	for _, bad := range []string{`"noaction"`, `"a:b:c"`, `"a b:c"`, `""`} {
		if err := os.WriteFile(path, []byte(`{"expose": [`+bad+`]}`), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadConfig(path); pmlerr.CodeOf(err, "") != pmlerr.InvalidConfig {
			t.Fatalf("%s: %v", bad, err)
		}
	}
	e := capEnv(t)
	if err := e.pkg.Expose("bad"); pmlerr.CodeOf(err, "") != pmlerr.InvalidConfig {
		t.Fatalf("flag: %v", err)
	}
	if err := e.pkg.Expose("cap:ok"); err != nil {
		t.Fatal(err)
	}
}
