package workspace

import (
	"net/http"

	"github.com/pml-go/pml/internal/httpserve"
)

// HTTPServer serves the package's MCP server over Streamable HTTP at /mcp
// (`pml serve`), and the trace viewer at / with its API at /api/traces:
// HTTPHandler's origin and token checks, within lim's header,
// body and idle bounds. Its token is not a gateway key, so no connection
// counts as unauthenticated: that bound is off, and the server is meant for
// a loopback address only.
func (p *Workspace) HTTPServer(o ServeOptions, lim httpserve.Limits) *httpserve.Server {
	mux := http.NewServeMux()
	mux.Handle("/mcp", p.HTTPHandler(o))
	p.mountViewer(mux, o)
	lim.MaxUnauthConns = -1
	return httpserve.New(httpserve.LimitBodies(mux, lim), lim, p.log)
}
