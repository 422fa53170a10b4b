package gatewayclient

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/wire"
)

// overloadAware turns the gateway's 429 on its MCP endpoint and on
// POST /api/v1/execute into the OVERLOADED error it stands for. The MCP
// client would report a bare "Too Many Requests", which the package would
// take for an unreachable gateway (and run client-only code offline); the
// error returned here travels wrapped through the client, so callTool (and
// executePlain, through the HTTP client) finds it and passes it on.
//
// A 503 "draining" (a replica on its way out, docs/operations.md) admitted
// nothing, so the request is sent again at once, and up to drainingRetries
// times with a doubling wait from 100 ms (at most the Retry-After): behind a
// balancer it reaches another replica. Past that it is OVERLOADED too.
type overloadAware struct{ next http.RoundTripper }

const (
	drainingRetries   = 5
	firstDrainingWait = 100 * time.Millisecond
)

func (o overloadAware) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/mcp") && !strings.HasSuffix(r.URL.Path, wire.ExecutePath) {
		return o.next.RoundTrip(r)
	}
	resp, err := o.next.RoundTrip(r)
	for try := 0; err == nil && try < drainingRetries && draining(resp) && r.GetBody != nil; try++ {
		wait := time.Duration(0)
		if try > 0 {
			wait = min(retryAfter(resp), firstDrainingWait<<(try-1))
		}
		if _, err = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)); err == nil {
			err = resp.Body.Close()
		}
		var body io.ReadCloser
		if err == nil {
			body, err = r.GetBody()
		}
		if err != nil {
			return nil, err
		}
		select {
		case <-r.Context().Done():
			return nil, r.Context().Err()
		case <-time.After(wait):
		}
		again := r.Clone(r.Context())
		again.Body = body
		resp, err = o.next.RoundTrip(again)
	}
	if err != nil || (resp.StatusCode != http.StatusTooManyRequests && !draining(resp)) {
		return resp, err
	}
	retry, status := retryAfter(resp), resp.StatusCode
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	if status == http.StatusServiceUnavailable {
		return nil, pmlerr.New(pmlerr.Overloaded, "the gateway is shutting down (HTTP 503, draining); retry after %v", retry).
			With("retry_after_ms", retry.Milliseconds())
	}
	return nil, pmlerr.New(pmlerr.Overloaded, "the gateway is overloaded (HTTP 429); retry after %v", retry).
		With("retry_after_ms", retry.Milliseconds())
}

// draining reports whether resp is a replica's refusal while it shuts
// down: 503 with error "draining" (a 503 for a missing database is not).
func draining(resp *http.Response) bool {
	return resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get(wire.DrainingHeader) != ""
}

// retryAfter is the response's Retry-After in seconds, else 1 s.
func retryAfter(resp *http.Response) time.Duration {
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
		return time.Duration(s) * time.Second
	}
	return time.Second
}

// overloaded reports whether err is the gateway refusing work for load.
func overloaded(err error) bool { return pmlerr.CodeOf(err, "") == pmlerr.Overloaded }
