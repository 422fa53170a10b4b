package wire

import (
	"context"
	"encoding/json"
	"reflect"
	"runtime"
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

// The copy of a usual `_meta` takes a fraction of what the decoder's maps
// held, over 2 KiB per object.
func TestCompactMetaSize(t *testing.T) {
	var meta map[string]any
	raw := `{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
		"io.modelcontextprotocol/clientInfo":{"name":"parked","version":"0"},
		"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true},"elicitation":{"form":{}}}}`
	if err := json.Unmarshal([]byte(raw), &meta); err != nil {
		t.Fatal(err)
	}
	const n = 100
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		_ = compactObject(meta)
	}
	runtime.ReadMemStats(&after)
	// 1.7 KiB for its six objects with Go 1.26's maps.
	if per := (after.TotalAlloc - before.TotalAlloc) / n; per > 3<<10 {
		t.Errorf("a compacted _meta allocates %d bytes", per)
	}
}
