package gatewayclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// maxAnswerBytes bounds what the package reads of an answer of the
// gateway's HTTP API.
const maxAnswerBytes = 1 << 20

// apiRequest is one request to the gateway's HTTP API. Every such request
// goes through Remote.do, on the client whose transport adds the key and the
// package's headers and turns 401/403 into UNAUTHORIZED.
type apiRequest struct {
	method string
	path   string // under the gateway's URL, e.g. /api/v1/routing
	body   any    // sent as JSON unless nil
	etag   string // If-None-Match, unless ""
	// marksDown: a timeout counts the gateway as down for ConnectTimeout
	// (see Remote.down). Off for requests whose slowness says nothing about
	// the gateway's reachability.
	marksDown bool
}

// apiAnswer is the gateway's answer: status, headers and the body, read.
type apiAnswer struct {
	status int
	header http.Header
	body   []byte
}

// do sends r and reads the answer. A failure to reach the gateway or read
// its answer is a NETWORK_ERROR (or the wire error the transport made of a
// refusal); the status is the caller's to judge.
func (g *Remote) do(ctx context.Context, r apiRequest) (apiAnswer, error) {
	var body io.Reader
	if r.body != nil {
		data, err := json.Marshal(r.body)
		if err != nil {
			return apiAnswer{}, fmt.Errorf("encode %s %s: %w", r.method, r.path, err)
		}
		body = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, g.url+r.path, body)
	if err != nil {
		return apiAnswer{}, fmt.Errorf("%s %s: %w", r.method, r.path, err)
	}
	if r.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if r.etag != "" {
		req.Header.Set("If-None-Match", r.etag)
	}
	resp, err := g.http.Do(req)
	if err != nil {
		if r.marksDown {
			return apiAnswer{}, g.down(err)
		}
		return apiAnswer{}, g.networkError(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes))
	if err != nil {
		return apiAnswer{}, g.networkError(err)
	}
	return apiAnswer{status: resp.StatusCode, header: resp.Header, body: data}, nil
}
