package wire

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/pmlerr"
)

// connect serves execute and discover over in-memory transports, execute
// answering with answer, and returns a connected client session.
func connect(t *testing.T, answer func(ExecuteRequest) Answer) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	srv := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "0"}, nil)
	AddExecuteAndDiscover(srv,
		func(_ context.Context, _ *mcp.CallToolRequest, er ExecuteRequest) *mcp.CallToolResult {
			return AnswerResult(answer(er))
		},
		func(context.Context, *mcp.CallToolRequest, DiscoverRequest) (DiscoverAnswer, error) {
			return DiscoverAnswer{}, nil
		})
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// TestExecuteAnswerIsStructuredContent: every execute answer, success or
// error (a bad request included), reaches an MCP client both as the text it
// always was and as structured content equal to that text parsed, and the
// tool's output schema is listed.
func TestExecuteAnswerIsStructuredContent(t *testing.T) {
	cs := connect(t, func(er ExecuteRequest) Answer {
		if er.Code == "fail" {
			return ErrorAnswer(pmlerr.New(pmlerr.ToolError, "boom"), "")
		}
		return Answer{Status: StatusSuccess, Result: json.RawMessage(`{"temperature":21.5,"tags":["a"]}`)}
	})
	ctx := context.Background()
	cases := map[string]struct {
		args    any
		isError bool
		status  string
	}{
		"success":     {map[string]any{"code": "return 1"}, false, "success"},
		"error":       {map[string]any{"code": "fail"}, true, "error"},
		"bad request": {map[string]any{"code": 42}, true, "error"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "execute", Arguments: c.args})
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError != c.isError || len(res.Content) != 1 {
				t.Fatalf("isError %v, %d content items", res.IsError, len(res.Content))
			}
			var fromText any
			if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &fromText); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(res.StructuredContent, fromText) {
				t.Fatalf("structured %#v, text %#v", res.StructuredContent, fromText)
			}
			if got := fromText.(map[string]any)["status"]; got != c.status {
				t.Fatalf("status %v", got)
			}
		})
	}
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range list.Tools {
		if tool.Name != "execute" {
			continue
		}
		schema, _ := json.Marshal(tool.OutputSchema)
		var s struct {
			Type       string         `json:"type"`
			Required   []string       `json:"required"`
			Properties map[string]any `json:"properties"`
			Additional bool           `json:"additionalProperties"`
		}
		if err := json.Unmarshal(schema, &s); err != nil || s.Type != "object" || !s.Additional ||
			s.Properties["error_code"] == nil || s.Properties["result"] == nil {
			t.Fatalf("execute output schema %s (%v)", schema, err)
		}
		return
	}
	t.Fatal("no execute tool listed")
}
