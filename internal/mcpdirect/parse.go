// Package mcpdirect is what the direct tools/call paths share: the
// gateway's MCP endpoint and pml stdio each serve their hot request, one
// plain tools/call, without the SDK's server machinery around it, and hand
// everything else to the SDK (docs/architecture.md "The MCP endpoint" and
// "pml stdio"; docs/performance.md "Near the floor (issue 42)"). Both read
// a call's params as the SDK reads them and write its result as the SDK
// writes it.
package mcpdirect

import (
	"bytes"
	"encoding/json"
	"reflect"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/rawjson"
)

// MethodCallTool is the JSON-RPC method of a tool call.
const MethodCallTool = "tools/call"

// CallParams decodes a tools/call's params as the SDK's CallToolParamsRaw,
// when every key is one the direct paths know (name, arguments, _meta),
// matched exactly as the SDK's decoder matches keys. Anything else (input
// responses, request state, a key of another case, params that are not an
// object, a name that is not a string) is false: the SDK answers it. raw
// must be valid JSON, as both direct paths' decoders leave it: it is read
// in one pass (rawjson), and Arguments is a slice of it; only params with
// an escaped key are decoded.
func CallParams(raw json.RawMessage) (*mcp.CallToolParamsRaw, bool) {
	var p *mcp.CallToolParamsRaw
	known := true
	member := func(key string, value []byte) bool {
		switch key {
		case "name":
			p.Name, known = rawjson.String(value)
		case "arguments":
			p.Arguments = value
		case "_meta":
			var meta map[string]any
			if json.Unmarshal(value, &meta) != nil {
				known = false
			}
			p.Meta = meta
		default:
			known = false
		}
		return known
	}
	p = &mcp.CallToolParamsRaw{}
	if !rawjson.Members(raw, func(key, value []byte) bool { return member(string(key), value) }) {
		var fields map[string]json.RawMessage
		if json.Unmarshal(raw, &fields) != nil || fields == nil {
			return nil, false
		}
		p, known = &mcp.CallToolParamsRaw{}, true
		for k, v := range fields {
			if !member(k, v) {
				break
			}
		}
	}
	if !known {
		return nil, false
	}
	return p, true
}

// HasProgressToken reports whether a message may carry a progress token:
// a call that does is the SDK's to answer on both paths.
func HasProgressToken(raw []byte) bool { return bytes.Contains(raw, []byte(`"progressToken"`)) }

// EncodeResult is a result as the SDK's connection writes it: its own JSON
// (a tool call's result encodes itself), once; any other without HTML
// escaping, as the SDK's encoder writes it.
func EncodeResult(res mcp.Result) ([]byte, error) {
	if r, ok := res.(*mcp.CallToolResult); ok {
		if data, ok := encodeTextResult(r); ok {
			return data, nil
		}
	}
	if m, ok := res.(json.Marshaler); ok {
		return m.MarshalJSON()
	}
	return marshalNoEscape(res)
}

// marshalNoEscape is json.Marshal without HTML escaping.
func marshalNoEscape(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// encodeTextResult encodes the result every pml tool answers with, one
// plain text item and structured content already encoded (wire.AnswerResult),
// to the same JSON as the SDK's CallToolResult.MarshalJSON. The SDK encodes
// the text, then compacts that encoding, then validates and compacts the
// structured content: three passes over an answer it holds twice. This
// escapes the text and validates the structured content, one pass each,
// and leaves the rest of the result to the SDK's own encoding of it
// without the two (so a field the SDK adds, such as resultType for a client
// of MCP 2026-07-28, is still written). Anything else is false: the SDK
// encodes it (TestEncodeTextResult).
func encodeTextResult(r *mcp.CallToolResult) ([]byte, bool) {
	if len(r.Content) != 1 {
		return nil, false
	}
	text, ok := r.Content[0].(*mcp.TextContent)
	if !ok || len(text.Meta) > 0 || text.Annotations != nil {
		return nil, false
	}
	// Valid JSON holds a line break only as whitespace, which the SDK's
	// compacting drops and which would end the message on stdio.
	structured, ok := r.StructuredContent.(json.RawMessage)
	if r.StructuredContent != nil && (!ok || !rawjson.Valid(structured) || bytes.ContainsAny(structured, "\r\n")) {
		return nil, false
	}
	shell := *r
	shell.Meta, shell.Content, shell.StructuredContent = nil, nil, nil
	rest, err := shellJSON(shell)
	if err != nil || !bytes.HasPrefix(rest, []byte(emptyContent)) {
		return nil, false
	}
	var meta []byte
	if len(r.Meta) > 0 {
		if meta, err = json.Marshal(r.Meta); err != nil {
			return nil, false
		}
	}
	// The text quoted: its quotes (a JSON answer has many) take two bytes.
	out := make([]byte, 0, len(meta)+len(text.Text)*5/4+len(structured)+len(rest)+64)
	out = append(out, '{')
	if meta != nil {
		out = append(out, `"_meta":`...)
		out = append(out, meta...)
		out = append(out, ',')
	}
	out = append(out, `"content":[{"type":"text","text":`...)
	out = rawjson.AppendString(out, text.Text, rawjson.AsEncodingJSON) // as json.Marshal quotes it
	out = append(out, "}]"...)
	if r.StructuredContent != nil {
		out = append(out, `,"structuredContent":`...)
		out = append(out, structured...)
	}
	return append(out, rest[len(emptyContent):]...), true
}

// emptyContent begins the SDK's encoding of a tool result with no _meta
// and no content.
const emptyContent = `{"content":null`

// shellJSON is the SDK's encoding of a tool result's shell (no _meta,
// content or structured content). The usual shell, all zero but for
// IsError, is encoded once (plainShells); reflection made it a fifth of
// the answer's encoding.
func shellJSON(shell mcp.CallToolResult) ([]byte, error) {
	probe := shell
	probe.IsError = false
	if !reflect.ValueOf(&probe).Elem().IsZero() {
		return shell.MarshalJSON()
	}
	if shell.IsError {
		return plainShells[1], nil
	}
	return plainShells[0], nil
}

// plainShells are the SDK's encodings of the zero shell, and of the zero
// shell with IsError; read only.
var plainShells = func() (out [2][]byte) {
	for i, isError := range []bool{false, true} {
		b, err := (&mcp.CallToolResult{IsError: isError}).MarshalJSON()
		if err != nil {
			panic(err) // the SDK cannot encode its own zero value
		}
		out[i] = b
	}
	return out
}()
