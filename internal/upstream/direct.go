package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/rawjson"
	"github.com/pml-go/pml/internal/stdioconn"
)

// newProtocol is the first protocol version whose requests carry the
// session in their _meta and whose tool results may ask for input (the
// SDK's client adds the one and answers the other): its sessions call
// through the SDK.
const newProtocol = "2026-07-28"

// plainCalls reports whether a session of this handshake sends tools/call
// as a plain request, which callDirect can make without the SDK's client.
func plainCalls(ir *mcp.InitializeResult) bool {
	return ir != nil && ir.ProtocolVersion != "" && ir.ProtocolVersion < newProtocol
}

// callDirect calls a stdio server's tool as the SDK's ClientSession.CallTool
// would, the same request on the same connection, without the SDK's client
// around it: no middleware, no second decoding of the answer into a fresh
// 32 KiB buffer, one goroutine hand-off fewer (docs/performance.md "What
// code mode costs over a direct call"). A result of one text item, the
// common case, becomes the caller's value here (out); any other result is
// decoded by the SDK's own CallToolResult (res) for convertResult, so what
// the code sees is the same either way. action is the tool's name on the
// server, arguments a compact JSON object.
func callDirect(ctx context.Context, conn *stdioconn.Conn, action string, arguments json.RawMessage) (out json.RawMessage, res *mcp.CallToolResult, err error) {
	// {"name":…,"arguments":…}, as the SDK writes CallToolParams; arguments
	// is compact already, so it is not encoded again.
	params := make([]byte, 0, len(`{"name":"","arguments":}`)+len(action)+len(arguments))
	params = rawjson.AppendString(append(params, `{"name":`...), action, rawjson.AsEncodingJSON)
	params = append(params, `,"arguments":`...)
	params = append(append(params, arguments...), '}')
	raw, err := conn.Call(ctx, "tools/call", params)
	if err != nil {
		return nil, nil, err
	}
	if text, ok := singleText(raw); ok {
		return textResult(text), nil, nil
	}
	res = new(mcp.CallToolResult)
	if err := json.Unmarshal(raw, res); err != nil {
		return nil, nil, fmt.Errorf("calling %q: unmarshaling result: %w", "tools/call", err)
	}
	return nil, res, nil
}

// The compact form of a single text result, around the text's JSON string.
var compactTextPrefix, compactTextSuffix = []byte(`{"content":[{"type":"text","text":`), []byte(`}]}`)

// singleText is the text of a result that holds exactly one text item and
// nothing else a caller reads: {"content":[{"type":"text","text":"…"}]},
// with "isError": false at most. Keys are matched exactly, as the SDK's
// decoder matches them; anything else (structured content, an error, _meta,
// annotations, other items) is left to the SDK's decoding.
func singleText(raw json.RawMessage) (string, bool) {
	// Most servers write that result compact, in this order: then only the
	// text is decoded (and must be one JSON string, nothing after it).
	if bytes.HasPrefix(raw, compactTextPrefix) && bytes.HasSuffix(raw, compactTextSuffix) {
		quoted := raw[len(compactTextPrefix) : len(raw)-len(compactTextSuffix)]
		if s, ok := rawjson.String(quoted); ok {
			return s, true
		}
		var s string // space around the string, which String declines
		if json.Unmarshal(quoted, &s) == nil {
			return s, true
		}
	}
	return decodedSingleText(raw)
}

// decodedSingleText is singleText for a result in any form: decoded.
func decodedSingleText(raw json.RawMessage) (string, bool) {
	var res map[string]json.RawMessage
	if json.Unmarshal(raw, &res) != nil {
		return "", false
	}
	for k, v := range res {
		switch {
		case k == "content":
		case k == "isError" && string(v) == "false":
		default:
			return "", false
		}
	}
	var content []map[string]json.RawMessage
	if json.Unmarshal(res["content"], &content) != nil || len(content) != 1 || len(content[0]) != 2 {
		return "", false
	}
	typ, text := content[0]["type"], content[0]["text"]
	if string(typ) != `"text"` || len(text) == 0 || text[0] != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(text, &s) != nil {
		return "", false
	}
	return s, true
}
