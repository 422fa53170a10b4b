package upstream_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/upstream"
)

func TestResultConversion(t *testing.T) {
	p, _ := newPool(t, upstream.Options{})
	s := p.Add(fixture(t, "fx"))
	counter := filepath.Join(t.TempDir(), "counter")
	cases := []struct {
		name, tool, args, want string
	}{
		{"structuredContent wins over text", "add", `{"a":2,"b":3}`, `{"sum":5}`},
		{"text that is not JSON becomes a string", "echo", `{"text":"hello world"}`, `"hello world"`},
		{"text that parses is decoded", "echo", `{"text":" {\"a\": [1, 2]} "}`, `{"a":[1,2]}`},
		{"a number in text is a number", "echo", `{"text":"42"}`, `42`},
		{"a JSON object in a text item", "json", `{}`, `{"ok":true,"n":42,"items":["a","b"]}`},
		{"several items give the content array", "multi", `{}`, `[{"type":"text","text":"first"},{"type":"text","text":"second"}]`},
		{"full tool id is accepted", "fx:echo", `{"text":"x"}`, `"x"`},
		{"null args are {}", "json", `null`, `{"ok":true,"n":42,"items":["a","b"]}`},
		{"side effects run once per call (1)", "count", `{"file":` + quote(counter) + `}`, `1`},
		{"side effects run once per call (2)", "count", `{"file":` + quote(counter) + `}`, `2`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := string(call(t, s, c.tool, c.args)); got != c.want {
				t.Fatalf("%s(%s) = %s, want %s", c.tool, c.args, got, c.want)
			}
		})
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestIsErrorIsToolError(t *testing.T) {
	p, _ := newPool(t, upstream.Options{})
	s := p.Add(fixture(t, "fx"))
	_, err := s.Call(ctxTimeout(t, 10*time.Second), "fail", json.RawMessage(`{"message":"disk on fire"}`))
	pe := wantCode(t, err, pmlerr.ToolError)
	if !strings.Contains(pe.Message, "disk on fire") {
		t.Fatalf("tool error message = %q", pe.Message)
	}
	if pe.Details["tool"] != "fx:fail" {
		t.Fatalf("tool error details = %v", pe.Details)
	}
}

func TestUnknownTool(t *testing.T) {
	p, _ := newPool(t, upstream.Options{})
	s := p.Add(fixture(t, "fx"))
	_, err := s.Call(ctxTimeout(t, 10*time.Second), "nope", nil)
	pe := wantCode(t, err, pmlerr.UnknownTool)
	if !strings.Contains(pe.Message, "fx:nope") {
		t.Fatalf("unknown tool message = %q", pe.Message)
	}
	// Invalid arguments to a known tool are a tool error, not an unknown tool.
	_, err = s.Call(ctxTimeout(t, 10*time.Second), "sleep", json.RawMessage(`{"ms":"soon"}`))
	wantCode(t, err, pmlerr.ToolError)
}

// A call the server refuses for arguments that do not match the tool's
// schema is a TOOL_ERROR carrying the tool's declaration, so the AI client
// can fix it from the error; the server then serves the corrected call.
func TestInvalidArgumentsDeclareTheTool(t *testing.T) {
	p, _ := newPool(t, upstream.Options{})
	s := p.Add(fixture(t, "fx"))
	ctx := ctxTimeout(t, 10*time.Second)
	_, err := s.Call(ctx, "add", json.RawMessage(`{"a": "one", "b": 2}`))
	pe := wantCode(t, err, pmlerr.ToolError)
	decl, _ := pe.Details["declaration"].(string)
	if !strings.HasPrefix(decl, "mcp.fx.add(args: {") || !strings.Contains(pe.Message, `"a"`) || pe.Details["tool"] != "fx:add" {
		t.Fatalf("invalid arguments: %q %v", pe.Message, pe.Details)
	}
	// A tool that fails with valid arguments gets no declaration.
	_, err = s.Call(ctx, "fail", json.RawMessage(`{"message":"disk on fire"}`))
	if pe := wantCode(t, err, pmlerr.ToolError); pe.Details["declaration"] != nil {
		t.Fatalf("a tool failure with valid arguments declared the tool: %v", pe.Details)
	}
	out, err := s.Call(ctx, "add", json.RawMessage(`{"a": 1, "b": 2}`))
	if err != nil || string(out) != `{"sum":3}` {
		t.Fatalf("next call: %s %v", out, err)
	}
}

func TestArgumentsMustBeAnObject(t *testing.T) {
	p, starts := newPool(t, upstream.Options{})
	s := p.Add(fixture(t, "fx"))
	_, err := s.Call(ctxTimeout(t, 10*time.Second), "echo", json.RawMessage(`["x"]`))
	wantCode(t, err, pmlerr.InvalidRequest)
	if len(starts.get()) != 0 {
		t.Fatal("bad arguments started the server")
	}
}

func TestToolsListsAllPages(t *testing.T) {
	p, _ := newPool(t, upstream.Options{})
	s := p.Add(fixture(t, "fx", "-page-size", "2"))
	list, err := s.Tools(ctxTimeout(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]json.RawMessage{}
	for _, info := range list {
		byID[info.ID] = info.InputSchema
		if info.Namespace() != "fx" {
			t.Errorf("tool %s outside namespace fx", info.ID)
		}
	}
	for _, id := range []string{"fx:echo", "fx:add", "fx:sleep", "fx:crash", "fx:hang", "fx:fail", "fx:count", "fx:json", "fx:env", "fx:multi"} {
		if _, ok := byID[id]; !ok {
			t.Errorf("tool %s missing from %d listed (pages of 2)", id, len(list))
		}
	}
	if schema := string(byID["fx:echo"]); !strings.Contains(schema, `"text"`) {
		t.Errorf("echo input schema = %s", schema)
	}
}
