package gateway_test

import (
	"context"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// barrier is an upstream MCP server over Streamable HTTP on loopback with one
// tool, wait, that answers only when n calls wait in it at the same time:
// it proves the gateway holds n executions parked at once, with no timing
// assumption. It is cyclic, so one server serves many waves.
type barrier struct {
	n     int
	conns atomic.Int64 // TCP connections the gateway opened to it

	mu      sync.Mutex
	waiting int
	open    chan struct{}
	rssMiB  float64 // process RSS when the last wave's n-th call arrived
	onFull  func()  // called when the n-th call arrives, if set
}

// startBarrier serves a barrier for waves of n and returns its /mcp URL.
func startBarrier(tb testing.TB, n int) (*barrier, string) {
	tb.Helper()
	b := &barrier{n: n, open: make(chan struct{})}
	srv := mcp.NewServer(&mcp.Implementation{Name: "barrier", Version: "0"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "wait", Description: "returns \"released\" once every call of the wave waits"},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			if err := b.wait(ctx); err != nil {
				return nil, nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `"released"`}}}, nil, nil
		})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	// No ReadHeaderTimeout, as in serveCounted.
	hs := &http.Server{
		Handler: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil),
		ConnState: func(_ net.Conn, st http.ConnState) {
			if st == http.StateNew {
				b.conns.Add(1)
			}
		},
	}
	go func() { _ = hs.Serve(ln) }()
	tb.Cleanup(func() { _ = hs.Close() })
	return b, "http://" + ln.Addr().String() + "/mcp"
}

func (b *barrier) wait(ctx context.Context) error {
	b.mu.Lock()
	open := b.open
	b.waiting++
	if b.waiting == b.n {
		b.rssMiB, _, _ = readMemory()
		if b.onFull != nil {
			b.onFull()
		}
		close(open)
		b.open, b.waiting = make(chan struct{}), 0
	}
	b.mu.Unlock()
	select {
	case <-open:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// rss is the RSS measured when the last wave was all parked.
func (b *barrier) rss() float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.rssMiB
}
