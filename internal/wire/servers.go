package wire

// ServerStatus is a hosted MCP server's state as discover, /healthz and the
// catalog show it: "idle", "starting", "ready", "failed" or "stopped", with
// the last start error while it fails.
type ServerStatus struct {
	State string `json:"state"`
	Error string `json:"error,omitempty"`
}
