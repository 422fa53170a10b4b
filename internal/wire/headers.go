package wire

import (
	"slices"
	"strings"
)

// Version is the version of a build that was given none at link time: what
// internal/buildinfo reports then, in `pml version`, the MCP handshake's
// serverInfo and the gateway's health answer alike.
const Version = "0.1.0"

// MaxRequestBytes bounds every request body the gateway takes; larger ones
// get 413. The package sizes its trace batches under it.
const MaxRequestBytes = 1 << 20

// Headers of requests from the package to the gateway.
const (
	// ClientHeader marks requests from the PML package (a UX hint, not a
	// security boundary: docs/protocol.md "Headers").
	ClientHeader = "X-PML-Client"
	// ClientNamespacesHeader lists, comma-separated, the namespaces the PML
	// package serves on its machine: its built-in client tools, the servers
	// of its .pml.json and its installed dependencies. The gateway routes
	// every tool of those namespaces to the client and never resolves one to
	// a capability, so whatever the store holds, the package's own tools
	// answer its calls (docs/security.md "Tenants and names").
	ClientNamespacesHeader = "X-PML-Client-Namespaces"
	// TraceparentHeader is the W3C trace context header. The package sends
	// its run's trace id so the gateway's work joins the same trace.
	TraceparentHeader = "traceparent"
	// TraceQueueHeader and TracesDroppedHeader travel with a trace batch:
	// the package's outbox depth once the batch is delivered, and the traces
	// it dropped since its last delivered batch.
	TraceQueueHeader    = "X-PML-Trace-Queue"
	TracesDroppedHeader = "X-PML-Traces-Dropped"
	// MaxTraceQueue bounds a package's trace outbox, and so what either
	// header can honestly say: the gateway takes no larger value.
	MaxTraceQueue = 10_000
)

// TraceIDMeta is the key, in an execute call's MCP _meta, of the trace id
// the caller asks the gateway to record a server-side run under
// (docs/protocol.md "Execute"). The package sends a fresh one, so that a
// run it stops (Ctrl-C closes the request, and no answer comes back) is
// still named by its trace id in the CANCELLED it answers itself.
const TraceIDMeta = "pml/trace_id"

// DrainingHeader marks the gateway's 503 to an MCP request while the replica
// shuts down (docs/operations.md "Rolling updates"): nothing of the request
// ran, so the package sends it again, and another replica takes it.
const DrainingHeader = "X-PML-Draining"

// FormatClientNamespaces is the ClientNamespacesHeader value for namespaces.
func FormatClientNamespaces(namespaces []string) string {
	return strings.Join(slices.Sorted(slices.Values(namespaces)), ",")
}
