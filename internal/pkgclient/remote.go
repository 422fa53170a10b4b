package pkgclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/atomicfile"
	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/routing"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/wire"
)

// ConnectTimeout bounds reaching the gateway: an unreachable gateway is a
// prompt NETWORK_ERROR, not a hang.
const ConnectTimeout = 5 * time.Second

// Remote is a gateway reached over MCP Streamable HTTP.
type Remote struct {
	url      string
	http     *http.Client
	auth     *gatewayAuth
	cacheDir string // routing rules cache

	localNS *atomic.Pointer[string] // the ClientNamespacesHeader value

	mu      sync.Mutex
	session *mcp.ClientSession

	// After a timeout reaching the gateway it counts as down for
	// ConnectTimeout: requests in that window fail at once instead of each
	// waiting out its own connect timeout, so a gateway that drops packets
	// costs one timeout. A refused connection fails fast by itself and marks
	// nothing, so a restarted gateway is used again at once.
	downMu    sync.Mutex
	downUntil time.Time
	downErr   error
}

// unreachable returns the last network error while the gateway counts as down.
func (g *Remote) unreachable() error {
	g.downMu.Lock()
	defer g.downMu.Unlock()
	if time.Now().Before(g.downUntil) {
		return g.downErr
	}
	return nil
}

// down turns err into a NETWORK_ERROR, remembering timeouts. An error that
// already carries a wire code (UNAUTHORIZED from the transport) is the
// gateway's answer, not its absence: it is returned as it is.
func (g *Remote) down(err error) error {
	if pe, ok := pmlerr.As(err); ok {
		return pe
	}
	ne := networkError(g.url, err)
	var nerr net.Error
	if !errors.Is(err, context.DeadlineExceeded) && !(errors.As(err, &nerr) && nerr.Timeout()) {
		return ne
	}
	g.downMu.Lock()
	defer g.downMu.Unlock()
	g.downUntil, g.downErr = time.Now().Add(ConnectTimeout), ne
	return ne
}

// NewRemote returns a client for the gateway at baseURL (without /mcp).
// The key is sent to that scheme and host only; Open has checked that it
// does not travel in clear text to another machine. cacheDir holds the
// routing rules cache; "" disables it.
func NewRemote(baseURL, apiKey, cacheDir string) *Remote {
	dialer := &net.Dialer{Timeout: ConnectTimeout, KeepAlive: 30 * time.Second}
	transport := &http.Transport{
		DialContext:           dialer.DialContext,
		TLSHandshakeTimeout:   ConnectTimeout,
		ResponseHeaderTimeout: 0, // executions may take minutes; the ctx bounds them
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       90 * time.Second,
	}
	base := strings.TrimRight(baseURL, "/")
	auth := &gatewayAuth{key: apiKey, source: keySource{kind: "given"}}
	auth.base, _ = url.Parse(base) // unparsable: owns nothing, so no request carries the key
	localNS := new(atomic.Pointer[string])
	return &Remote{
		url:      base,
		http:     &http.Client{Transport: headers{next: overloadAware{next: transport}, auth: auth, localNS: localNS}},
		auth:     auth,
		cacheDir: cacheDir,
		localNS:  localNS,
	}
}

// SetClientNamespaces implements Gateway.
func (g *Remote) SetClientNamespaces(namespaces []string) {
	v := gateway.FormatClientNamespaces(namespaces)
	g.localNS.Store(&v)
}

func (g *Remote) connect(ctx context.Context) (*mcp.ClientSession, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.session != nil {
		return g.session, nil
	}
	if err := g.unreachable(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, ConnectTimeout)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "pml-package", Version: gateway.Version}, nil)
	s, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: g.url + "/mcp", HTTPClient: g.http, DisableStandaloneSSE: true}, nil)
	if err != nil {
		return nil, g.down(err)
	}
	g.session = s
	return s, nil
}

// drop forgets a broken session so the next call reconnects.
func (g *Remote) drop(s *mcp.ClientSession) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.session == s {
		g.session = nil
		_ = s.Close()
	}
}

// networkError is a failure to reach the gateway at url. An error that
// already carries a wire code is kept (see down).
func networkError(url string, err error) error {
	if pe, ok := pmlerr.As(err); ok {
		return pe
	}
	return &pmlerr.Error{Code: pmlerr.NetworkError, Message: fmt.Sprintf("gateway %s unreachable: %v", url, err), Err: err}
}

// callTool runs one gateway tool and returns its text.
func (g *Remote) callTool(ctx context.Context, name string, args any) (string, bool, error) {
	s, err := g.connect(ctx)
	if err != nil {
		return "", false, err
	}
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		if ctx.Err() != nil {
			return "", false, ctx.Err()
		}
		if pe, ok := pmlerr.As(err); ok && overloaded(pe) {
			return "", false, pe // the session is fine: the gateway is busy
		}
		g.drop(s)
		return "", false, g.down(err)
	}
	if len(res.Content) == 0 {
		return "", res.IsError, pmlerr.New(pmlerr.NetworkError, "gateway %s: empty answer to %s", g.url, name)
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		return "", res.IsError, pmlerr.New(pmlerr.NetworkError, "gateway %s: %s answered non-text content", g.url, name)
	}
	return text.Text, res.IsError, nil
}

// Execute implements Gateway.
func (g *Remote) Execute(ctx context.Context, req wire.ExecuteRequest) (wire.Answer, error) {
	text, _, err := g.callTool(ctx, "execute", req)
	if err != nil {
		return wire.Answer{}, err
	}
	var a wire.Answer
	if err := json.Unmarshal([]byte(text), &a); err != nil {
		return wire.Answer{}, pmlerr.New(pmlerr.NetworkError, "gateway %s: undecodable execute answer: %v", g.url, err)
	}
	return a, nil
}

// Call implements Gateway.
func (g *Remote) Call(ctx context.Context, req wire.CallRequest) (json.RawMessage, error) {
	text, isErr, err := g.callTool(ctx, "call", req)
	if err != nil {
		return nil, err
	}
	if isErr {
		return nil, answerError(text)
	}
	return json.RawMessage(text), nil
}

// Discover implements Gateway.
func (g *Remote) Discover(ctx context.Context, req wire.DiscoverRequest) (wire.DiscoverAnswer, error) {
	var out wire.DiscoverAnswer
	text, isErr, err := g.callTool(ctx, "discover", req)
	if err != nil {
		return out, err
	}
	if isErr {
		return out, answerError(text)
	}
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		return out, pmlerr.New(pmlerr.NetworkError, "gateway %s: undecodable discover answer: %v", g.url, err)
	}
	return out, nil
}

func answerError(text string) error {
	var a wire.Answer
	if err := json.Unmarshal([]byte(text), &a); err != nil || a.Status != wire.StatusError {
		return pmlerr.New(pmlerr.ToolError, "%s", text)
	}
	return a.Err()
}

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
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, g.url+"/api/v1/routing", nil)
	if err != nil {
		return cached, err
	}
	if etag != "" {
		req.Header.Set("If-None-Match", etag)
	}
	resp, err := g.http.Do(req)
	if err != nil {
		return cached, g.down(err)
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusNotModified:
		return cached, nil
	case http.StatusOK:
	default:
		return cached, pmlerr.New(pmlerr.NetworkError, "gateway %s: routing rules: HTTP %d", g.url, resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return cached, networkError(g.url, err)
	}
	rules, err := routing.Parse(body)
	if err != nil {
		return cached, pmlerr.New(pmlerr.NetworkError, "gateway %s: %v", g.url, err)
	}
	g.writeRulesCache(body, resp.Header.Get("ETag"))
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
	_ = writeFileAtomic(filepath.Join(g.cacheDir, "routing.json"), data)
}

// ReportTools implements Gateway.
func (g *Remote) ReportTools(ctx context.Context, clientID string, list []store.ClientTool) error {
	body, err := json.Marshal(map[string]any{"client_id": clientID, "tools": list})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, ConnectTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.url+"/api/v1/client-tools", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := g.http.Do(req)
	if err != nil {
		return g.down(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return pmlerr.New(pmlerr.NetworkError, "gateway %s: reporting client tools: HTTP %d", g.url, resp.StatusCode)
	}
	return nil
}

// Close implements Gateway.
func (g *Remote) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.session == nil {
		return nil
	}
	err := g.session.Close()
	g.session = nil
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// writeFileAtomic writes the package's small state files (caches, ids,
// configs) so readers never see a torn file.
func writeFileAtomic(path string, data []byte) error {
	return atomicfile.Write(path, data, atomicfile.Fast)
}
