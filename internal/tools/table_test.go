package tools

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/pml-go/pml/internal/pmlerr"
)

type addArgs struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

func testTable() *Table {
	return NewTable(
		Typed(Info{ID: "math:add", Description: "Add.", InputSchema: json.RawMessage(
			`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`)},
			func(_ context.Context, a addArgs) (any, error) { return a.A + a.B, nil }),
		Typed(Info{ID: "t:echo", Description: "Echo.", InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(_ context.Context, a map[string]any) (any, error) { return a, nil }),
		Func{Info: Info{ID: "t:fail"}, Run: func(context.Context, json.RawMessage) (any, error) {
			return nil, errors.New("disk on fire")
		}},
		Func{Info: Info{ID: "t:denied"}, Run: func(context.Context, json.RawMessage) (any, error) {
			return nil, pmlerr.New(pmlerr.PermissionDenied, "no")
		}},
		Func{Info: Info{ID: "t:panic"}, Run: func(context.Context, json.RawMessage) (any, error) {
			panic("boom")
		}},
		Func{Info: Info{ID: "t:badresult"}, Run: func(context.Context, json.RawMessage) (any, error) {
			return func() {}, nil
		}},
		Func{Info: Info{ID: "t:raw"}, Run: func(_ context.Context, args json.RawMessage) (any, error) {
			return args, nil
		}},
	)
}

func TestTableCall(t *testing.T) {
	tb := testTable()
	ctx := context.Background()
	out, err := tb.Call(ctx, "math:add", json.RawMessage(`{"a": 2, "b": 0.5}`))
	if err != nil || string(out) != "2.5" {
		t.Fatalf("math:add = %s, %v; want 2.5", out, err)
	}
	// Interface-typed values keep big integers exactly.
	out, err = tb.Call(ctx, "t:echo", json.RawMessage(`{"n": 12345678901234567890}`))
	if err != nil || string(out) != `{"n":12345678901234567890}` {
		t.Fatalf("t:echo = %s, %v", out, err)
	}
	// Empty and null args reach Run as {}.
	for _, args := range []string{"", "null"} {
		out, err = tb.Call(ctx, "t:raw", json.RawMessage(args))
		if err != nil || string(out) != "{}" {
			t.Fatalf("t:raw(%q) = %s, %v; want {}", args, out, err)
		}
	}
}

func TestTableErrors(t *testing.T) {
	tb := testTable()
	ctx := context.Background()
	cases := []struct {
		tool, args string
		code       pmlerr.Code
		msg        string
	}{
		{"math:add", `{"a": 1}`, pmlerr.ToolError, `math:add: invalid arguments: missing required field "b"`},
		{"math:add", `{"a": "1", "b": 2}`, pmlerr.ToolError, `field "a"`},
		{"t:fail", `{}`, pmlerr.ToolError, "t:fail: disk on fire"},
		{"t:denied", `{}`, pmlerr.PermissionDenied, "no"},
		{"t:panic", `{}`, pmlerr.ToolError, "panic: boom"},
		{"t:badresult", `{}`, pmlerr.ToolError, "result is not JSON"},
		{"math:ad", `{}`, pmlerr.UnknownTool, `did you mean "math:add"`},
	}
	for _, c := range cases {
		_, err := tb.Call(ctx, c.tool, json.RawMessage(c.args))
		pe, ok := pmlerr.As(err)
		if !ok || pe.Code != c.code || !strings.Contains(pe.Message, c.msg) {
			t.Errorf("Call(%s, %s) = %v, want %s containing %q", c.tool, c.args, err, c.code, c.msg)
		}
	}
}

// A call that fails validation carries the tool's declaration, and one to an
// unknown tool the declarations of the nearest: the AI client fixes its call
// from the error alone. The table still serves the next call.
func TestTableErrorsDeclareTheTool(t *testing.T) {
	tb := testTable()
	ctx := context.Background()
	const want = "mcp.math.add(args: { a: number; b: number }): Promise<unknown>"
	_, err := tb.Call(ctx, "math:add", json.RawMessage(`{"a": 1}`))
	if pe, ok := pmlerr.As(err); !ok || pe.Details["declaration"] != want {
		t.Fatalf("invalid arguments: %v %+v", err, pe)
	}
	_, err = tb.Call(ctx, "math:ad", json.RawMessage(`{}`))
	pe, ok := pmlerr.As(err)
	if !ok || pe.Code != pmlerr.UnknownTool {
		t.Fatalf("unknown tool: %v", err)
	}
	decls, _ := pe.Details["declarations"].([]string)
	if sugg, _ := pe.Details["suggestions"].([]string); len(decls) != len(sugg) || decls[0] != want {
		t.Fatalf("declarations %q for suggestions %q", decls, sugg)
	}
	if out, err := tb.Call(ctx, "math:add", json.RawMessage(`{"a": 1, "b": 2}`)); err != nil || string(out) != "3" {
		t.Fatalf("next call: %s %v", out, err)
	}
}

func TestTableCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := testTable().Call(ctx, "math:add", json.RawMessage(`{"a":1,"b":2}`)); !errors.Is(err, context.Canceled) {
		t.Fatalf("Call with cancelled context = %v, want context.Canceled", err)
	}
}

func TestTableToolsSortedByID(t *testing.T) {
	infos, err := testTable().Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := ids(infos)
	want := []string{"math:add", "t:badresult", "t:denied", "t:echo", "t:fail", "t:panic", "t:raw"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("Tools() = %v, want %v", got, want)
	}
}

// HasTool answers what a look for the id in Tools' list answers.
func TestTableHasToolAgreesWithTools(t *testing.T) {
	tab := testTable()
	infos, err := tab.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, info := range infos {
		if !tab.HasTool(info.ID) {
			t.Errorf("HasTool(%q) = false for a listed tool", info.ID)
		}
	}
	for _, id := range []string{"math:sub", "math", "t:", "", "add", "math:add "} {
		if tab.HasTool(id) {
			t.Errorf("HasTool(%q) = true for a tool not listed", id)
		}
	}
}
