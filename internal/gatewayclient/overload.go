package gatewayclient

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/pml-go/pml/internal/pmlerr"
)

// overloadAware turns the gateway's 429 on its MCP endpoint into the
// OVERLOADED error it stands for. The MCP client would report a bare "Too
// Many Requests", which the package would take for an unreachable gateway
// (and run client-only code offline); the error returned here travels
// wrapped through the client, so callTool finds it and passes it on.
type overloadAware struct{ next http.RoundTripper }

func (o overloadAware) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := o.next.RoundTrip(r)
	if err != nil || resp.StatusCode != http.StatusTooManyRequests || r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/mcp") {
		return resp, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	retry := time.Second
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
		retry = time.Duration(s) * time.Second
	}
	return nil, pmlerr.New(pmlerr.Overloaded, "the gateway is overloaded (HTTP 429); retry after %v", retry).
		With("retry_after_ms", retry.Milliseconds())
}

// overloaded reports whether err is the gateway refusing work for load.
func overloaded(err error) bool { return pmlerr.CodeOf(err, "") == pmlerr.Overloaded }
