package upstream

import (
	"context"
	"io"
	"net/http"
	"time"
)

// httpClient returns the client of a streamable HTTP session. It adds the
// configured headers (typically Authorization) to every request, and bounds
// the session-ending DELETE by grace: the SDK waits up to 5 s for it, and a
// server stuck on a call may never answer it, which would hold Pool.Close.
func httpClient(base http.RoundTripper, headers map[string]string, grace time.Duration) *http.Client {
	return &http.Client{Transport: &sessionTransport{base: base, headers: headers, deleteTimeout: grace}}
}

// newTransport is a pool's connection pool to its HTTP servers. Many calls
// run at once against one server, so it keeps many idle connections per host
// (http.DefaultTransport keeps 2, which under load means a new TCP connection
// per call and ports piling up in TIME_WAIT).
func newTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 1024
	t.MaxIdleConnsPerHost = 1024
	return t
}

type sessionTransport struct {
	base          http.RoundTripper
	headers       map[string]string
	deleteTimeout time.Duration
}

func (t *sessionTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := req.Context(), context.CancelFunc(func() {})
	if req.Method == http.MethodDelete {
		ctx, cancel = context.WithTimeout(ctx, t.deleteTimeout)
	}
	// A RoundTripper must not modify the caller's request.
	req = req.Clone(ctx)
	for k, v := range t.headers {
		req.Header.Set(k, v)
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = cancelOnClose{resp.Body, cancel}
	return resp, nil
}

// cancelOnClose releases a request's timeout once its body is done with.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b cancelOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}
