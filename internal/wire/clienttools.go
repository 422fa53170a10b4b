package wire

import "encoding/json"

// ClientTool is a tool a package reported as available on its machine.
type ClientTool struct {
	ID          string          `json:"id"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
}

// ClientToolsReport is the body of POST /api/v1/client-tools: the tools on
// the package's machine, under the package's own id.
type ClientToolsReport struct {
	ClientID string       `json:"client_id"`
	Tools    []ClientTool `json:"tools"`
}

// LearnRequest is the body of POST /api/v1/capabilities: code that ran
// successfully on the package's machine, for the gateway to save as a
// capability. The answer is a CapabilityRef (200) or nothing (204).
type LearnRequest struct {
	Code   string `json:"code"`
	Intent string `json:"intent"`
	// OutputSchema is the JSON Schema of the run's value (types only, no
	// values), which types the capability's result; optional.
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
}
