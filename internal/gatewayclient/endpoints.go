package gatewayclient

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"

	"github.com/pml-go/pml/internal/atomicfile"
	"github.com/pml-go/pml/internal/pmlerr"
	regclient "github.com/pml-go/pml/internal/registry/client"
	"github.com/pml-go/pml/internal/routing"
	"github.com/pml-go/pml/internal/tracing"
	"github.com/pml-go/pml/internal/wire"
)

// Routing fetches the gateway's rules, revalidating a disk cache with its
// ETag; when the gateway is unreachable the cached rules are used, and
// without a cache the embedded defaults.
func (g *Remote) Routing(ctx context.Context) (routing.Rules, error) {
	cached, etag := g.readRulesCache()
	if err := g.unreachable(); err != nil {
		return cached, err
	}
	ctx, cancel := context.WithTimeout(ctx, ConnectTimeout)
	defer cancel()
	ans, err := g.do(ctx, apiRequest{method: http.MethodGet, path: "/api/v1/routing", etag: etag, marksDown: true})
	if err != nil {
		return cached, err
	}
	switch ans.status {
	case http.StatusNotModified:
		return cached, nil
	case http.StatusOK:
	default:
		return cached, pmlerr.New(pmlerr.NetworkError, "gateway %s: routing rules: HTTP %d", g.url, ans.status)
	}
	rules, err := routing.Parse(ans.body)
	if err != nil {
		return cached, pmlerr.New(pmlerr.NetworkError, "gateway %s: %v", g.url, err)
	}
	g.writeRulesCache(ans.body, ans.header.Get("ETag"))
	return rules, nil
}

type rulesCache struct {
	ETag  string          `json:"etag"`
	Rules json.RawMessage `json:"rules"`
}

func (g *Remote) readRulesCache() (routing.Rules, string) {
	if g.cacheDir != "" {
		if data, err := os.ReadFile(filepath.Join(g.cacheDir, "routing.json")); err == nil {
			var c rulesCache
			if json.Unmarshal(data, &c) == nil {
				if r, err := routing.Parse(c.Rules); err == nil {
					return r, c.ETag
				}
			}
		}
	}
	return routing.Default(), ""
}

func (g *Remote) writeRulesCache(body []byte, etag string) {
	if g.cacheDir == "" {
		return
	}
	data, _ := json.Marshal(rulesCache{ETag: etag, Rules: body})
	_ = atomicfile.Write(filepath.Join(g.cacheDir, "routing.json"), data, atomicfile.Fast)
}

// ReportTools implements Gateway: POST /api/v1/client-tools.
func (g *Remote) ReportTools(ctx context.Context, clientID string, list []wire.ClientTool) error {
	ctx, cancel := context.WithTimeout(ctx, ConnectTimeout)
	defer cancel()
	ans, err := g.do(ctx, apiRequest{method: http.MethodPost, path: "/api/v1/client-tools",
		body: wire.ClientToolsReport{ClientID: clientID, Tools: list}, marksDown: true})
	if err != nil {
		return err
	}
	if ans.status/100 != 2 {
		return pmlerr.New(pmlerr.NetworkError, "gateway %s: reporting client tools: HTTP %d", g.url, ans.status)
	}
	return nil
}

// LearnCapability implements Gateway: POST /api/v1/capabilities.
func (g *Remote) LearnCapability(ctx context.Context, req wire.LearnRequest) (*wire.CapabilityRef, error) {
	ans, err := g.do(ctx, apiRequest{method: http.MethodPost, path: "/api/v1/capabilities",
		body: req})
	if err != nil {
		return nil, err
	}
	switch ans.status {
	case http.StatusOK:
		var ref wire.CapabilityRef
		if err := json.Unmarshal(ans.body, &ref); err != nil {
			return nil, pmlerr.New(pmlerr.NetworkError, "gateway %s: undecodable capability: %v", g.url, err)
		}
		return &ref, nil
	case http.StatusNoContent:
		return nil, nil
	}
	return nil, pmlerr.New(pmlerr.NetworkError, "gateway %s: saving a capability: HTTP %d: %s", g.url, ans.status, bytes.TrimSpace(ans.body))
}

// Registry implements Gateway; entries are cached under <cacheDir>/registry.
func (g *Remote) Registry() *regclient.Client {
	dir := ""
	if g.cacheDir != "" {
		dir = filepath.Join(g.cacheDir, "registry")
	}
	return regclient.New(g.url, g.http, dir).WithUnreachable(g.describeUnreachable)
}

// PostTraces implements TracePoster: POST /api/traces with the key and
// traceparent every request carries, plus the backlog headers.
func (g *Remote) PostTraces(ctx context.Context, batch []tracing.Trace, b TraceBacklog) error {
	client := &http.Client{Transport: backlogHeaders{next: g.http.Transport, b: b}}
	return tracing.HTTPPoster(client, g.url, "")(ctx, batch)
}

type backlogHeaders struct {
	next http.RoundTripper
	b    TraceBacklog
}

func (h backlogHeaders) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(wire.TraceQueueHeader, strconv.Itoa(h.b.Depth))
	r.Header.Set(wire.TracesDroppedHeader, strconv.FormatInt(h.b.Dropped, 10))
	return h.next.RoundTrip(r)
}
