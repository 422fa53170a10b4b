package upstream

import (
	"context"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// connectSSE opens an HTTP+SSE session. The SDK ties its event stream (a GET
// answered for the whole session) to the context it connects with, while ctx
// here bounds only the start: the stream gets its own context, cancelled when
// the connection closes, and ctx cancels it only until the stream is open.
func connectSSE(ctx context.Context, url string, client *http.Client) (mcp.Connection, error) {
	streamCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, cancel)
	conn, err := (&mcp.SSEClientTransport{Endpoint: url, HTTPClient: client}).Connect(streamCtx)
	if !stop() && err == nil {
		// ctx ended while the stream opened: the stream is already cancelled.
		_ = conn.Close()
		err = context.Cause(ctx)
	}
	if err != nil {
		cancel()
		return nil, err
	}
	return sseConn{conn, cancel}, nil
}

// sseConn releases the event stream's context when the session closes.
type sseConn struct {
	mcp.Connection
	cancel context.CancelFunc
}

func (c sseConn) Close() error {
	err := c.Connection.Close()
	c.cancel()
	return err
}
