package workspace

import (
	"net/http"

	"github.com/pml-go/pml/internal/gateway"
)

// HTTPServer serves the package's MCP server over Streamable HTTP at /mcp
// (`pml serve`), and the trace viewer at / with its API at /api/traces:
// HTTPHandler's origin and token checks, within lim's header,
// body and idle bounds. Its token is not a gateway key, so no connection
// counts as unauthenticated: that bound is off, and the server is meant for
// a loopback address only.
func (p *Workspace) HTTPServer(o ServeOptions, lim gateway.HTTPLimits) *gateway.HTTPServer {
	mux := http.NewServeMux()
	mux.Handle("/mcp", p.HTTPHandler(o))
	p.mountViewer(mux, o)
	lim.MaxUnauthConns = -1
	return gateway.NewHTTPServer(gateway.LimitBodies(mux, lim), lim, p.log)
}
