package wire

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// CompactMeta hands the next handler the same `_meta`, nested objects and
// arrays included.
func TestCompactMetaKeepsContent(t *testing.T) {
	var meta map[string]any
	raw := `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":7,
		"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},
		"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}},"roots":{"listChanged":true}},
		"list":[{"a":null},1.5,"s",[true,{}]]}`
	if err := json.Unmarshal([]byte(raw), &meta); err != nil {
		t.Fatal(err)
	}
	var want map[string]any
	_ = json.Unmarshal([]byte(raw), &want)
	req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Meta: meta}}
	var got map[string]any
	h := CompactMeta(func(_ context.Context, _ string, r mcp.Request) (mcp.Result, error) {
		if call, ok := r.(*mcp.CallToolRequest); ok && call.Params != nil {
			got = call.Params.Meta
		}
		return nil, nil
	})
	if _, err := h(context.Background(), "tools/call", req); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("_meta changed:\n got %v\nwant %v", got, want)
	}
	// Requests without _meta or params pass as they are.
	for _, r := range []mcp.Request{&mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{}}, &mcp.CallToolRequest{}, &mcp.ListToolsRequest{}} {
		if _, err := h(context.Background(), "m", r); err != nil {
			t.Fatal(err)
		}
	}
}
