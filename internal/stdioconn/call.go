package stdioconn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/rawjson"
)

// callIDBase is where the ids of Call's requests start: far above the
// SDK's own request ids on the same connection, which count up from 1, and
// below 2^53, so that a server in JavaScript reads them exactly.
const callIDBase = 1 << 52

// cancelNotifyTimeout bounds the notifications/cancelled Call sends for a
// request its caller gave up on, as the SDK bounds its own.
const cancelNotifyTimeout = 5 * time.Second

// pending is the requests Call sent whose answers have not come, by id.
type pending struct {
	mu      sync.Mutex
	next    int64
	waiting map[int64]chan *jsonrpc.Response
}

// add takes the next id and the channel its answer will come on.
func (p *pending) add() (int64, chan *jsonrpc.Response) {
	ch := make(chan *jsonrpc.Response, 1)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.next++
	id := callIDBase + p.next
	if p.waiting == nil {
		p.waiting = map[int64]chan *jsonrpc.Response{}
	}
	p.waiting[id] = ch
	return id, ch
}

func (p *pending) remove(id int64) {
	p.mu.Lock()
	delete(p.waiting, id)
	p.mu.Unlock()
}

// claim hands msg to the Call waiting for it, when it answers one.
func (p *pending) claim(msg jsonrpc.Message) bool {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok {
		return false
	}
	id, ok := resp.ID.Raw().(int64)
	if !ok || id <= callIDBase {
		return false
	}
	p.mu.Lock()
	ch, ok := p.waiting[id]
	delete(p.waiting, id)
	p.mu.Unlock()
	if ok {
		ch <- resp
	}
	return ok
}

// Call sends one request beside the SDK's session on this connection and
// waits for its answer, which the session never sees: the result, or the
// answer's error as a *jsonrpc.Error. params is one JSON value on one line
// (compact). A caller that gives up (ctx) gets ctx's error and the server a
// notifications/cancelled for the request, as the SDK's calls do; a stream
// that ends first fails the call with mcp.ErrConnectionClosed.
//
// It is the SDK's request without the SDK around it, for requests whose
// sending and answer need nothing of the session (no progress, no _meta of
// its own): the package's calls of a local server's tools
// (docs/performance.md "What code mode costs over a direct call").
func (c *Conn) Call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	if bytes.ContainsAny(params, "\r\n") {
		return nil, fmt.Errorf("calling %q: params must be on one line", method)
	}
	id, answer := c.calls.add()
	line := make([]byte, 0, 64+len(method)+len(params))
	line = append(line, `{"jsonrpc":"2.0","id":`...)
	line = strconv.AppendInt(line, id, 10)
	line = append(line, `,"method":`...)
	line = rawjson.AppendString(line, method, rawjson.AsEncodingJSON)
	line = append(line, `,"params":`...)
	line = append(line, params...)
	line = append(line, "}\n"...)
	// Done is taken once: a run's call context is a long chain of values,
	// and Err and Done walk all of it on every use.
	done := ctx.Done()
	if err := c.writeLine(ctx, done, line); err != nil {
		c.calls.remove(id)
		return nil, fmt.Errorf("calling %q: %w", method, err)
	}
	select {
	case resp := <-answer:
		if resp.Error != nil {
			return nil, fmt.Errorf("calling %q: %w", method, resp.Error)
		}
		return resp.Result, nil
	case <-done:
		c.calls.remove(id)
		go c.cancelled(context.WithoutCancel(ctx), id, ctx.Err())
		return nil, ctx.Err()
	case <-c.readDone:
		c.calls.remove(id)
		return nil, fmt.Errorf("%w: calling %q: %v", mcp.ErrConnectionClosed, method, c.readErr)
	case <-c.closed:
		c.calls.remove(id)
		return nil, fmt.Errorf("%w: calling %q: closed", mcp.ErrConnectionClosed, method)
	}
}

// cancelled tells the server that the caller of request id gave up (best
// effort, off the caller's path, as the SDK does).
func (c *Conn) cancelled(ctx context.Context, id int64, why error) {
	ctx, cancel := context.WithTimeout(ctx, cancelNotifyTimeout)
	defer cancel()
	params, err := json.Marshal(&mcp.CancelledParams{Reason: why.Error(), RequestID: id})
	if err != nil {
		return
	}
	line := append([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":`), params...)
	_ = c.writeLine(ctx, ctx.Done(), append(line, "}\n"...))
}

// writeLine writes one whole line, under the lock Write takes, unless ctx
// (whose Done channel is done) ended.
func (c *Conn) writeLine(ctx context.Context, done <-chan struct{}, line []byte) error {
	select {
	case <-done:
		return ctx.Err()
	default:
	}
	select {
	case <-c.closed:
		return errors.New("connection closed")
	default:
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err := c.w.Write(line)
	return err
}
