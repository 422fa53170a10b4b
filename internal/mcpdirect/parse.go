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

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MethodCallTool is the JSON-RPC method of a tool call.
const MethodCallTool = "tools/call"

// CallParams decodes a tools/call's params as the SDK's CallToolParamsRaw,
// when every key is one the direct paths know (name, arguments, _meta),
// matched exactly as the SDK's decoder matches keys. Anything else (input
// responses, request state, a key of another case, params that are not an
// object, a name that is not a string) is false: the SDK answers it.
func CallParams(raw json.RawMessage) (*mcp.CallToolParamsRaw, bool) {
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil || fields == nil {
		return nil, false
	}
	p := &mcp.CallToolParamsRaw{}
	for k, v := range fields {
		switch k {
		case "name":
			if json.Unmarshal(v, &p.Name) != nil {
				return nil, false
			}
		case "arguments":
			p.Arguments = v
		case "_meta":
			var meta map[string]any
			if json.Unmarshal(v, &meta) != nil {
				return nil, false
			}
			p.Meta = meta
		default:
			return nil, false
		}
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
