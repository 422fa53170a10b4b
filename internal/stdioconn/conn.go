// Package stdioconn is the MCP client's connection to a local server over
// its stdin and stdout: newline-delimited JSON-RPC, read as the Go SDK's
// IOTransport reads it, with each message decoded once.
//
// The SDK's connection decodes every incoming message two or three times
// (as a batch first, then as a message, then its method), each time with a
// JSON decoder that takes a fresh 32 KiB buffer: three echo calls cost a
// local run about a dozen of those buffers, which the garbage collector
// then clears (docs/performance.md "What code mode costs over a direct
// call"). This connection reads with one long-lived decoder and decodes each
// message with encoding/json, keys matched exactly as the SDK matches them.
//
// It is the client side only: pml sends no batches, so a batch a server
// sends (a JSON array) is taken apart and its messages delivered in order;
// a request among them is answered on its own line, not in an array.
package stdioconn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Conn is an mcp.Connection over a server's stdout (r) and stdin (w).
type Conn struct {
	r io.ReadCloser
	w io.WriteCloser

	incoming <-chan frame
	queue    []jsonrpc.Message // the rest of a batch; Read is not concurrent

	writeMu sync.Mutex

	closeOnce sync.Once
	closed    chan struct{}
	closeErr  error
}

type frame struct {
	raw json.RawMessage
	err error
}

// New returns the connection over r and w. Like the SDK's IOTransport, a
// goroutine reads r so that Close unblocks a Read (it ends when r does), and
// a message over maxLineLength bytes (0: mcp.DefaultMaxLineLength, negative:
// no bound) ends the connection.
func New(r io.ReadCloser, w io.WriteCloser, maxLineLength int) *Conn {
	if maxLineLength == 0 {
		maxLineLength = mcp.DefaultMaxLineLength
	}
	incoming := make(chan frame)
	c := &Conn{r: r, w: w, incoming: incoming, closed: make(chan struct{})}
	go c.readLoop(r, maxLineLength, incoming)
	return c
}

// readLoop sends each JSON value read from r, or the error that ends r.
func (c *Conn) readLoop(r io.Reader, limit int, out chan<- frame) {
	var lim *frameLimit
	if limit > 0 {
		lim = &frameLimit{r: r, limit: limit}
		r = lim
	}
	dec := json.NewDecoder(r)
	for {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if err == nil {
			// One message per line: the next byte read ahead, if any,
			// ends the line (the SDK's check).
			var next [1]byte
			if n, rerr := dec.Buffered().Read(next[:]); n > 0 && next[0] != '\n' && next[0] != '\r' {
				err = errors.New("invalid trailing data at the end of stream")
			} else if rerr != nil && rerr != io.EOF {
				err = rerr
			}
		}
		select {
		case out <- frame{raw: raw, err: err}:
		case <-c.closed:
			return
		}
		if err != nil {
			return
		}
		if lim != nil {
			lim.count = 0
		}
	}
}

// errFrameTooLarge ends a connection whose server sent a message over the
// bound.
var errFrameTooLarge = errors.New("inbound JSON-RPC frame exceeded the configured maximum line length")

// frameLimit bounds the bytes read for one message.
type frameLimit struct {
	r            io.Reader
	limit, count int
}

func (f *frameLimit) Read(p []byte) (int, error) {
	if f.count >= f.limit {
		return 0, errFrameTooLarge
	}
	if len(p) > f.limit-f.count {
		p = p[:f.limit-f.count]
	}
	n, err := f.r.Read(p)
	f.count += n
	return n, err
}

// Read implements mcp.Connection.
func (c *Conn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(c.queue) > 0 {
		msg := c.queue[0]
		c.queue = c.queue[1:]
		return msg, nil
	}
	var f frame
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case f = <-c.incoming:
	case <-c.closed:
		return nil, io.EOF
	}
	if f.err != nil {
		return nil, f.err
	}
	if bytes.HasPrefix(f.raw, []byte("[")) {
		msgs, err := decodeBatch(f.raw)
		if err != nil {
			return nil, err
		}
		c.queue = msgs[1:]
		return msgs[0], nil
	}
	return decode(f.raw)
}

func decodeBatch(raw json.RawMessage) ([]jsonrpc.Message, error) {
	var batch []json.RawMessage
	if err := json.Unmarshal(raw, &batch); err != nil {
		return nil, fmt.Errorf("unmarshaling jsonrpc batch: %w", err)
	}
	if len(batch) == 0 {
		return nil, errors.New("empty batch")
	}
	msgs := make([]jsonrpc.Message, len(batch))
	for i, m := range batch {
		msg, err := decode(m)
		if err != nil {
			return nil, err
		}
		msgs[i] = msg
	}
	return msgs, nil
}

// decode reads one JSON-RPC message as jsonrpc.DecodeMessage does, keys
// matched exactly: a request when it has a method, else a response, which
// must have an id.
func decode(data []byte) (jsonrpc.Message, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
	}
	var version string
	if v, ok := m["jsonrpc"]; ok {
		if err := json.Unmarshal(v, &version); err != nil {
			return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
		}
	}
	if version != "2.0" {
		return nil, fmt.Errorf("invalid message version tag %q; expected %q", version, "2.0")
	}
	var rawID any
	if v, ok := m["id"]; ok {
		if err := json.Unmarshal(v, &rawID); err != nil {
			return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
		}
	}
	id, err := jsonrpc.MakeID(rawID)
	if err != nil {
		return nil, err
	}
	if v, ok := m["method"]; ok {
		var method string
		if err := json.Unmarshal(v, &method); err != nil {
			return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
		}
		return &jsonrpc.Request{Method: method, ID: id, Params: m["params"]}, nil
	}
	if !id.IsValid() {
		return nil, errors.New("JSON RPC invalid request: a response without an id")
	}
	resp := &jsonrpc.Response{ID: id, Result: m["result"]}
	if v, ok := m["error"]; ok {
		var werr *jsonrpc.Error
		if err := json.Unmarshal(v, &werr); err != nil {
			return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
		}
		if werr != nil { // a nil *Error in the interface would be a typed non-nil error
			resp.Error = werr
		}
	}
	return resp, nil
}

// Write implements mcp.Connection: one message, one line.
func (c *Conn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("encode jsonrpc message: %w", err)
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err = c.w.Write(append(data, '\n'))
	return err
}

// Close implements mcp.Connection: it closes both streams.
func (c *Conn) Close() error {
	c.closeOnce.Do(func() {
		c.closeErr = errors.Join(c.r.Close(), c.w.Close())
		close(c.closed)
	})
	return c.closeErr
}

// SessionID implements mcp.Connection: stdio has no session id.
func (c *Conn) SessionID() string { return "" }
