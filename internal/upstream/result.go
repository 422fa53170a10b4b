package upstream

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/rawjson"
)

// convertResult turns a tools/call result into the value the calling code sees
// (docs/protocol.md "Tool results"): structuredContent when present; else the
// text of a single text item, as JSON when it parses and as a JSON string
// otherwise; else the content array. isError becomes TOOL_ERROR with the error
// text.
func convertResult(id string, res *mcp.CallToolResult) (json.RawMessage, error) {
	if res.IsError {
		return nil, pmlerr.New(pmlerr.ToolError, "%s", errorText(id, res)).With("tool", id)
	}
	if res.StructuredContent != nil {
		return marshalResult(id, res.StructuredContent)
	}
	if len(res.Content) == 1 {
		if tc, ok := res.Content[0].(*mcp.TextContent); ok {
			return textResult(tc.Text), nil
		}
	}
	if res.Content == nil {
		return json.RawMessage(`[]`), nil
	}
	return marshalResult(id, res.Content)
}

// textResult is the value of a result's single text item: its JSON when
// it parses, else the text as a JSON string.
func textResult(text string) json.RawMessage {
	if mayBeJSON(strings.TrimLeft(text, " \t\r\n")) {
		if compact, ok := rawjson.Compact(nil, []byte(text)); ok {
			return compact
		}
	}
	// What json.Marshal writes for it, without the reflection.
	return rawjson.AppendString(make([]byte, 0, len(text)+2), text, rawjson.AsEncodingJSON)
}

// mayBeJSON reports whether t can begin a JSON value: an object, array,
// string or number, or one of the three literals.
func mayBeJSON(t string) bool {
	switch {
	case t == "":
		return false
	case strings.IndexByte(`{["-0123456789`, t[0]) >= 0:
		return true
	}
	return strings.HasPrefix(t, "true") || strings.HasPrefix(t, "false") || strings.HasPrefix(t, "null")
}

func marshalResult(id string, v any) (json.RawMessage, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, pmlerr.Wrap(pmlerr.ToolError, fmt.Errorf("encoding the result of %s: %w", id, err))
	}
	return data, nil
}

// errorText is the message of a failed tool: its text items, or failing
// that, its content as JSON.
func errorText(id string, res *mcp.CallToolResult) string {
	var texts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok && tc.Text != "" {
			texts = append(texts, tc.Text)
		}
	}
	if len(texts) > 0 {
		return strings.Join(texts, "\n")
	}
	if data, err := json.Marshal(res.Content); err == nil && len(res.Content) > 0 {
		return fmt.Sprintf("tool %s failed: %s", id, data)
	}
	return fmt.Sprintf("tool %s failed", id)
}
