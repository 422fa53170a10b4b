package gatewayclient

import (
	"io"
	"net/http"
	"strings"

	"github.com/pml-go/pml/internal/gateway/httpapi"
)

// TraceReader is a gateway whose trace read API (GET /api/traces and GET
// /api/traces/{id}) the package can serve again: `pml serve`'s trace viewer
// and `pml traces` use it. InProcess and Remote are.
type TraceReader interface {
	TraceReader() http.Handler
}

// maxTraceAnswer bounds what the package relays of one trace API answer;
// the gateway bounds its own answers well under it.
const maxTraceAnswer = 64 << 20

// TraceReader implements TraceReader: the request goes to the gateway with
// the package's key; the answer's status, type and body come back as they
// are. Only the trace read paths are relayed.
func (g *Remote) TraceReader() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || (r.URL.Path != "/api/traces" && !strings.HasPrefix(r.URL.Path, "/api/traces/")) {
			http.NotFound(w, r)
			return
		}
		req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, g.url+r.URL.EscapedPath()+"?"+r.URL.RawQuery, nil)
		if err != nil {
			httpapi.Error(w, http.StatusBadRequest, "bad_request", err.Error())
			return
		}
		req.Header.Set("Accept", "application/json")
		resp, err := g.http.Do(req)
		if err != nil {
			httpapi.Error(w, http.StatusBadGateway, "gateway_unreachable", "gateway "+g.url+": "+err.Error())
			return
		}
		defer resp.Body.Close()
		if ct := resp.Header.Get("Content-Type"); ct != "" {
			w.Header().Set("Content-Type", ct)
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, io.LimitReader(resp.Body, maxTraceAnswer))
	})
}
