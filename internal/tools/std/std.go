// Package std holds the gateway's built-in tools: pure functions over JSON
// values (json, math, string, datetime, crypto, encoding, collections). They
// are server-routed and touch no filesystem, network or process, so any
// caller may run them on the gateway.
package std

import (
	"encoding/json"
	"slices"

	"github.com/pml-go/pml/internal/tools"
)

// namespaces lists the namespaces New serves, sorted.
var namespaces = []string{"collections", "crypto", "datetime", "encoding", "json", "math", "string"}

// Namespaces returns the namespaces of the built-in tools, sorted.
func Namespaces() []string { return slices.Clone(namespaces) }

// New returns a provider serving every built-in tool.
func New() *tools.Table {
	return tools.NewTable(slices.Concat(
		jsonTools(), mathTools(), stringTools(), datetimeTools(),
		cryptoTools(), encodingTools(), collectionTools(),
	)...)
}

// Output schemas: what a call returns, which its declaration's promise
// shows (docs/how-it-works.md "Typed answers"). They say types only: the
// compact declarations built from them are read on every turn
// (docs/performance.md "What the AI pays: tool context").
const (
	returnsString = `{"type":"string"}`
	returnsNumber = `{"type":"number"}`
	// returnsItems is an array of the caller's own items, whatever they are.
	returnsItems = `{"type":"array"}`
	// returnsTime is an ISO 8601 text, or an integer for the unix and
	// unix_ms formats (formatTime).
	returnsTime = `{"type":["string","integer"]}`
	// arbitraryJSON is no output schema: the tool returns any JSON value the
	// caller gave or wrote, so its promise stays unknown.
	arbitraryJSON = ""
)

// schema marks a JSON Schema literal; the tests compile every one. An empty
// literal is no schema.
func schema(s string) json.RawMessage {
	if s == "" {
		return nil
	}
	return json.RawMessage(s)
}

// info is shorthand for a tools.Info literal.
func info(id, description, inputSchema, outputSchema string) tools.Info {
	return tools.Info{ID: id, Description: description, InputSchema: schema(inputSchema), OutputSchema: schema(outputSchema)}
}
