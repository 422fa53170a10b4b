package gatewayclient

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/pml-go/pml/internal/gateway/httpapi"
)

// TraceReader is a gateway whose trace read API (GET /api/traces and GET
// /api/traces/{id}) the package can serve again: `pml serve`'s trace viewer
// and `pml traces` use it. InProcess and Remote are.
type TraceReader interface {
	TraceReader() http.Handler
}

// UnreachableCode is the error code of TraceReader's answer when no answer
// came from the gateway: it could not be reached. Its status, 502, is the
// relay's; the gateway itself answered nothing (`pml traces` says so).
const UnreachableCode = "gateway_unreachable"

// unreachableMessage says that the gateway could not be reached, where it
// was looked for and where that address came from, and why.
func (g *Remote) unreachableMessage(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // the method and URL are said below, once
	}
	from := ""
	if g.urlSource != "" {
		from = " (from " + g.urlSource + ")"
	}
	return fmt.Sprintf("could not reach the gateway at %s%s: %v", g.url, from, err)
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
			httpapi.Error(w, http.StatusBadGateway, UnreachableCode, g.unreachableMessage(err))
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
