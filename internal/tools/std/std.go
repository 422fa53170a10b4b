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

// schema marks a JSON Schema literal; the tests compile every one.
func schema(s string) json.RawMessage { return json.RawMessage(s) }

// info is shorthand for a tools.Info literal.
func info(id, description, inputSchema string) tools.Info {
	return tools.Info{ID: id, Description: description, InputSchema: schema(inputSchema)}
}
