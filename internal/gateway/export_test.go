package gateway

import (
	"net/http"

	"github.com/pml-go/pml/internal/httpserve"
)

// SDKOnlyHandler is Handler with the SDK's handler serving every MCP
// request, no direct tools/call path: what the direct path must agree with.
func (s *Service) SDKOnlyHandler() http.Handler { return s.handlerWith(httpserve.Limits{}, false) }

// ServesDirectly reports whether the direct tools/call path serves a POST
// with headers h and body.
func (s *Service) ServesDirectly(h http.Header, body []byte) bool {
	d, ok := newDirectCalls(s.mcpTools(), http.NotFoundHandler(), s.log).(*directCalls)
	if !ok {
		return false
	}
	_, ok = d.parse(h, body)
	return ok
}
