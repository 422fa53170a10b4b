package wire

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// CompactMeta is a receiving middleware that gives a request's `_meta` the
// same content in maps of their size. The SDK's JSON decoder makes every
// object it decodes into a map with room for 64 entries, about 2 KiB, and a
// client of MCP 2026-07-28 sends three or more objects in every request's
// `_meta` (its protocol version, its info, its capabilities): about 6 KiB
// that a request holds for as long as its handler runs, an execution parked
// on a slow tool included (docs/performance.md "What one parked execution
// holds"). Only tool calls run long enough for it to matter; the params of
// other methods may be absent.
func CompactMeta(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if call, ok := req.(*mcp.CallToolRequest); ok && call.Params != nil && len(call.Params.Meta) > 0 {
			call.Params.Meta = compactObject(call.Params.Meta)
		}
		return next(ctx, method, req)
	}
}

// compactObject copies m, and the objects and arrays within it, into maps
// made for their number of entries. The values are those JSON decodes to, so
// no other kind holds a map.
func compactObject(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = compactValue(v)
	}
	return out
}

func compactValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		return compactObject(v)
	case []any:
		for i, e := range v {
			v[i] = compactValue(e)
		}
		return v
	}
	return v
}
