package gateway

import (
	"net/http"

	"github.com/pml-go/pml/internal/httpserve"
)

// SDKOnlyHandler is Handler with the SDK's handler serving every MCP
// request, no direct tools/call path: what the direct path must agree with.
func (s *Service) SDKOnlyHandler() http.Handler { return s.handlerWith(httpserve.Limits{}, false) }
