package pkgclient

import (
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/gateway"
)

// HTTPServer serves the package's MCP server over Streamable HTTP at /mcp
// (`pml serve`), within lim's header, body and idle bounds. It has no keys,
// so no connection counts as unauthenticated: that bound is off, and the
// server is meant for a loopback address only.
func (p *Package) HTTPServer(lim gateway.HTTPLimits) *gateway.HTTPServer {
	srv := p.NewMCPServer()
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	lim.MaxUnauthConns = -1
	return gateway.NewHTTPServer(gateway.LimitBodies(mux, lim), lim, p.log)
}
