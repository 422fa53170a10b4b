package testfixture

import (
	"context"
	"net"
	"net/http"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Gate is an MCP server over Streamable HTTP on loopback, in the test's
// process, with one tool, hold, that answers "released" only once the test
// opens the gate. It parks executions on a tool for as long as a test needs,
// with no timing assumption.
type Gate struct {
	URL string // the MCP endpoint

	mu      sync.Mutex
	waiting int
	open    chan struct{}
}

// StartGate serves a closed gate until the test ends.
func StartGate(t testing.TB) *Gate {
	t.Helper()
	g := &Gate{open: make(chan struct{})}
	srv := mcp.NewServer(&mcp.Implementation{Name: "gate", Version: "0"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "hold", Description: "returns \"released\" once the gate opens"},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			g.mu.Lock()
			g.waiting++
			open := g.open
			g.mu.Unlock()
			defer func() {
				g.mu.Lock()
				g.waiting--
				g.mu.Unlock()
			}()
			select {
			case <-open:
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `"released"`}}}, nil, nil
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
		})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)}
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() {
		g.Open()
		_ = hs.Close()
	})
	g.URL = "http://" + ln.Addr().String() + "/mcp"
	return g
}

// Waiting is how many hold calls wait at the gate now.
func (g *Gate) Waiting() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.waiting
}

// Open releases the calls waiting and lets every later one through.
func (g *Gate) Open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.open:
	default:
		close(g.open)
	}
}
