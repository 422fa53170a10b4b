// Package gatewaytest starts a real gateway on a loopback port for tests in
// any package, with a key, and connects Go SDK MCP clients to it.
package gatewaytest

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/httpserve"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/wire"
)

// Gateway is a running gateway.
type Gateway struct {
	URL string // base URL, without /mcp
	// MetricsURL is the operator's listener (Service.MetricsHandler), as
	// `pml gateway --metrics-addr` serves it.
	MetricsURL string
	Key        string
	Service    *gateway.Service
	server     *httpserve.Server
}

// Start runs a gateway on SQLite in a temp dir with opts (DB is filled in
// when empty) and creates a key for org "acme", project "web". It serves
// the way `pml gateway` does, within the default HTTP limits.
func Start(t testing.TB, opts gateway.Options) *Gateway {
	t.Helper()
	return StartLimited(t, opts, httpserve.Limits{})
}

// StartLimited is Start within lim.
func StartLimited(t testing.TB, opts gateway.Options, lim httpserve.Limits) *Gateway {
	t.Helper()
	return StartAt(t, func(string) gateway.Options { return opts }, lim)
}

// StartAt is StartLimited with options that depend on the gateway's own
// base URL (its resource URI, say), which optsFor is given.
func StartAt(t testing.TB, optsFor func(baseURL string) gateway.Options, lim httpserve.Limits) *Gateway {
	t.Helper()
	ctx := context.Background()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	opts := optsFor("http://" + ln.Addr().String())
	if opts.DB == "" {
		opts.DB = filepath.Join(t.TempDir(), "gateway.db")
	}
	svc, closer, err := gateway.Open(ctx, opts)
	if err != nil {
		_ = ln.Close()
		t.Fatalf("gateway.Open: %v", err)
	}
	key, err := gateway.CreateKey(ctx, svc.Store(), store.Scope{Org: "acme", Project: "web"})
	if err != nil {
		t.Fatalf("CreateKey: %v", err)
	}
	mln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := &Gateway{URL: "http://" + ln.Addr().String(), MetricsURL: "http://" + mln.Addr().String(), Key: key, Service: svc, server: svc.HTTPServer(lim)}
	metrics := httpserve.New(svc.MetricsHandler(), httpserve.Limits{MaxUnauthConns: -1}, nil)
	go func() { _ = g.server.Serve(context.Background(), ln) }()
	go func() { _ = metrics.Serve(context.Background(), mln) }()
	t.Cleanup(func() {
		_ = g.server.Close()
		_ = metrics.Close()
		_ = closer.Close()
	})
	return g
}

// Stop closes the listener (to simulate a dead gateway).
func (g *Gateway) Stop() { _ = g.server.Close() }

// NewKey creates another key, for another tenant.
func (g *Gateway) NewKey(t testing.TB, scope store.Scope) string {
	t.Helper()
	k, err := gateway.CreateKey(context.Background(), g.Service.Store(), scope)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

type headerTransport struct {
	headers http.Header
	next    http.RoundTripper
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.headers {
		r.Header[k] = v
	}
	return h.next.RoundTrip(r)
}

// HTTPClient is a client that sends h with every request.
func HTTPClient(h http.Header) *http.Client {
	return &http.Client{Transport: headerTransport{headers: h, next: http.DefaultTransport}}
}

// Connect opens an MCP client session with the key; asPackage adds
// X-PML-Client: package.
func (g *Gateway) Connect(t testing.TB, key string, asPackage bool) *mcp.ClientSession {
	t.Helper()
	h := http.Header{}
	if asPackage {
		h.Set(wire.ClientHeader, "package")
	}
	return g.ConnectWith(t, key, h)
}

// ConnectWith opens an MCP client session with the key and headers h on
// every request.
func (g *Gateway) ConnectWith(t testing.TB, key string, h http.Header) *mcp.ClientSession {
	t.Helper()
	h = h.Clone()
	if key != "" {
		h.Set("Authorization", "Bearer "+key)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil)
	s, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint:   g.URL + "/mcp",
		HTTPClient: &http.Client{Transport: headerTransport{headers: h, next: http.DefaultTransport}},
	}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// Execute calls the execute tool and decodes the answer.
func Execute(t testing.TB, s *mcp.ClientSession, req wire.ExecuteRequest) wire.Answer {
	t.Helper()
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "execute", Arguments: req})
	if err != nil {
		t.Fatalf("execute: %v", err)
	}
	return DecodeAnswer(t, res)
}

// DecodeAnswer reads the one JSON object of a tool result and checks isError
// agrees with its status.
func DecodeAnswer(t testing.TB, res *mcp.CallToolResult) wire.Answer {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("want one content item, got %d", len(res.Content))
	}
	text := res.Content[0].(*mcp.TextContent).Text
	var a wire.Answer
	if err := json.Unmarshal([]byte(text), &a); err != nil {
		t.Fatalf("answer is not JSON: %v: %s", err, text)
	}
	if res.IsError != (a.Status == wire.StatusError) {
		t.Fatalf("isError=%v but status=%s: %s", res.IsError, a.Status, text)
	}
	return a
}

// PostMCP posts a raw JSON-RPC body to /mcp with key, as any MCP client over
// HTTP would (accepting an event stream or plain JSON), and returns the
// response with its body read.
func (g *Gateway) PostMCP(t testing.TB, key, body string) (*http.Response, []byte) {
	t.Helper()
	return Do(t, http.MethodPost, g.URL+"/mcp", key, strings.NewReader(body),
		map[string]string{"Accept": "application/json, text/event-stream"})
}

// Do sends one request with a JSON body to url, with key as its bearer
// token (none when empty) and the headers hdr, and returns the response
// with its body read.
func Do(t testing.TB, method, url, key string, body io.Reader, hdr map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, out
}

// Discover calls the discover tool and decodes its answer.
func Discover(t testing.TB, s *mcp.ClientSession, req wire.DiscoverRequest) wire.DiscoverAnswer {
	t.Helper()
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "discover", Arguments: req})
	if err != nil || res.IsError || len(res.Content) != 1 {
		t.Fatalf("discover: %v %+v", err, res)
	}
	var d wire.DiscoverAnswer
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &d); err != nil {
		t.Fatalf("discover answer: %v", err)
	}
	return d
}
