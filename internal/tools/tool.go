// Package tools defines the one interface every tool source implements (the
// gateway's built-in std tools, upstream MCP servers, the package's built-in
// client tools and its local MCP servers) and a Mux that routes a tool id
// ("namespace:action") to the provider serving that namespace.
package tools

import (
	"context"
	"encoding/json"
	"strings"
)

// Info describes one tool as discover and the registry show it.
type Info struct {
	ID          string          `json:"id"` // "namespace:action"
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
	// OutputSchema describes the value a call returns (an MCP tool's
	// structuredContent); absent when the tool declares none.
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
	// OutputInferred says OutputSchema was not declared but inferred from
	// the results of successful calls (docs/how-it-works.md "The global
	// layer"): what calls returned, not a promise of the tool's.
	OutputInferred bool `json:"output_inferred,omitempty"`
	// Server is what the tool's server says of itself in initialize: its
	// name, title and instructions. Discover ranks each tool with its
	// server's context (docs/how-it-works.md "Discover and the tool
	// graph"); it is not part of the tool's listing.
	Server string `json:"-"`
	// Learned is the words runs taught of the tool, the tenant's and the
	// global layer's (docs/how-it-works.md "Discover and the tool graph"):
	// ranked as a field of its document, never shown.
	Learned string `json:"-"`
}

// maxServerText bounds Info.Server: a server's instructions can be long,
// and ranking reads them for every discover.
const maxServerText = 4096

// ServerText is Info.Server for a server that says of itself name, title,
// description and instructions in initialize: those not empty, a line
// each, at most maxServerText bytes.
func ServerText(name, title, description, instructions string) string {
	var parts []string
	for _, p := range []string{name, title, description, instructions} {
		if p = strings.TrimSpace(p); p != "" {
			parts = append(parts, p)
		}
	}
	return clip(strings.Join(parts, "\n"), maxServerText)
}

// Namespace returns the part of the id before the first ':'.
func (i Info) Namespace() string { ns, _ := Split(i.ID); return ns }

// Provider serves the tools of one or more namespaces.
//
// Call receives the arguments as a JSON object and returns the value the
// calling code sees, as JSON: a built-in returns its plain value; an MCP tool
// returns its structuredContent when present, else the text of a single text
// item (decoded as JSON when it parses, else as a JSON string), else the content
// array (docs/protocol.md "Tool results"). A tool failure is a *pmlerr.Error
// with code TOOL_ERROR; a name the provider does not serve is UNKNOWN_TOOL.
type Provider interface {
	Tools(ctx context.Context) ([]Info, error)
	Call(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error)
}

// Split splits "ns:action" into its parts. An id without ':' is all namespace.
func Split(id string) (namespace, action string) {
	ns, action, _ := strings.Cut(id, ":")
	return ns, action
}

// CallFunc is the shape of one tool call, shared by the sandbox's mcp bridge,
// trace recording and every router that sits between them.
type CallFunc func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error)
