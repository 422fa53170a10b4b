//go:build linux

package scale_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/wire"
)

// mcpClient is one Go SDK MCP client of the gateway, as an AI client or the
// package would hold it. It reconnects after a transport failure, so a
// client of a load balancer can retry on another replica.
type mcpClient struct {
	endpoint string
	http     *http.Client
	session  *mcp.ClientSession
}

// newHTTPClient is one client's connection pool; it carries the key.
func newHTTPClient(key string) *http.Client {
	return &http.Client{Transport: keyTransport{key: key, next: &http.Transport{
		MaxIdleConnsPerHost: 4,
		IdleConnTimeout:     30 * time.Second,
	}}}
}

type keyTransport struct {
	key  string
	next http.RoundTripper
}

func (k keyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+k.key)
	return k.next.RoundTrip(r)
}

// connectSessions opens n sessions of the Go SDK client named name to the
// gateway at baseURL, over one pool of up to conns idle connections kept
// for idle; they close when tb ends.
func connectSessions(tb testing.TB, baseURL, key, name string, n, conns int, idle time.Duration) []*mcp.ClientSession {
	tr := &http.Transport{MaxIdleConnsPerHost: conns, IdleConnTimeout: idle}
	tb.Cleanup(tr.CloseIdleConnections)
	httpClient := &http.Client{Transport: keyTransport{key: key, next: tr}}
	sessions := make([]*mcp.ClientSession, n)
	for i := range sessions {
		s, err := mcp.NewClient(&mcp.Implementation{Name: name, Version: "0"}, nil).Connect(context.Background(),
			&mcp.StreamableClientTransport{Endpoint: baseURL + "/mcp", HTTPClient: httpClient, DisableStandaloneSSE: true}, nil)
		if err != nil {
			tb.Fatalf("session %d: %v", i, err)
		}
		tb.Cleanup(func() { _ = s.Close() })
		sessions[i] = s
	}
	return sessions
}

func newMCPClient(baseURL, key string) *mcpClient {
	return &mcpClient{endpoint: baseURL + "/mcp", http: newHTTPClient(key)}
}

func (c *mcpClient) connect(ctx context.Context) (*mcp.ClientSession, error) {
	if c.session != nil {
		return c.session, nil
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "scale-test", Version: "0"}, nil)
	s, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: c.endpoint, HTTPClient: c.http, DisableStandaloneSSE: true,
	}, nil)
	if err != nil {
		return nil, fmt.Errorf("connect %s: %w", c.endpoint, err)
	}
	c.session = s
	return s, nil
}

// close ends the session; the next call connects again.
func (c *mcpClient) close() {
	if c.session != nil {
		_ = c.session.Close()
		c.session = nil
	}
}

// callTool runs one tool and returns the text of its one content item. A
// transport error drops the session.
func (c *mcpClient) callTool(ctx context.Context, name string, args any) (string, error) {
	s, err := c.connect(ctx)
	if err != nil {
		return "", err
	}
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		c.close()
		return "", fmt.Errorf("%s: %w", name, err)
	}
	return resultText(name, res)
}

// resultText is the text of a tool result's one content item.
func resultText(name string, res *mcp.CallToolResult) (string, error) {
	if len(res.Content) != 1 {
		return "", fmt.Errorf("%s: %d content items", name, len(res.Content))
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		return "", fmt.Errorf("%s: content is %T", name, res.Content[0])
	}
	return text.Text, nil
}

// execute runs code once. err is a transport failure; an error answer is
// an Answer with status error.
func (c *mcpClient) execute(ctx context.Context, code string) (wire.Answer, error) {
	text, err := c.callTool(ctx, "execute", wire.ExecuteRequest{Code: code})
	if err != nil {
		return wire.Answer{}, err
	}
	return decodeAnswer(text)
}

func decodeAnswer(text string) (wire.Answer, error) {
	var a wire.Answer
	if err := json.Unmarshal([]byte(text), &a); err != nil {
		return a, fmt.Errorf("execute answer %q: %w", text, err)
	}
	return a, nil
}

// executeRetrying runs code until it succeeds, retrying transport failures
// (a dead replica, a 502 from the balancer) until ctx ends; it returns the
// number of failed attempts. An error answer is not retried: it is a bug.
func (c *mcpClient) executeRetrying(ctx context.Context, code string) (wire.Answer, int, error) {
	failures := 0
	for {
		a, err := c.execute(ctx, code)
		if err == nil {
			if a.Status != wire.StatusSuccess {
				return a, failures, fmt.Errorf("execute: %s", a)
			}
			return a, failures, nil
		}
		failures++
		select {
		case <-ctx.Done():
			return a, failures, errors.Join(err, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}
