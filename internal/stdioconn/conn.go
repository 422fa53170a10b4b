// Package stdioconn is MCP over stdio (newline-delimited JSON-RPC) as the
// Go SDK's IOTransport speaks it, with each incoming message decoded once:
// the client's connection to a local server over its stdin and stdout, and
// pml stdio's connection to its AI client.
//
// The SDK's connection decodes every incoming message two or three times
// (as a batch first, then as a message, then its method), each time with a
// JSON decoder that takes a fresh 32 KiB buffer: three echo calls cost a
// local run about a dozen of those buffers, which the garbage collector
// then clears (docs/performance.md "What code mode costs over a direct
// call"). This connection splits the stream into messages itself, one a
// line (frames.go), and decodes each once, keys matched exactly as the SDK
// matches them.
//
// Batches (JSON arrays, protocol versions before 2025-06-18) are taken
// apart and their messages delivered in order. A server connection
// (NewServer) answers a batch's requests in one array, as the SDK does, and
// refuses batches once the session negotiated 2025-06-18 or later. pml
// sends no batches, so on a client connection a request in a server's batch
// is answered on its own line.
package stdioconn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"

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

	// take, when set, is offered each message read on its own (SetTake).
	take atomic.Pointer[func(jsonrpc.Message) bool]

	server bool
	// With server: the batches whose requests are not all answered, by
	// request id; the id of the initialize request; the protocol version
	// its answer negotiated.
	mu        sync.Mutex
	batches   map[jsonrpc.ID]*batch
	initID    jsonrpc.ID
	negotiate string

	closeOnce sync.Once
	closed    chan struct{}
	closeErr  error

	// The requests Call sent and is waiting on, and the end of the stream
	// they wait for besides their answer (call.go).
	calls    pending
	readDone chan struct{} // closed when readLoop stops reading
	readErr  error         // why; set before readDone is closed
}

// frame is one message read: decoded (msg), a batch still to take apart
// (raw), or the error that ended the stream.
type frame struct {
	msg jsonrpc.Message
	raw json.RawMessage
	err error
}

// New returns a client's connection over r and w. Like the SDK's
// IOTransport, a goroutine reads r so that Close unblocks a Read (it ends
// when r does), and a message over maxLineLength bytes (0:
// mcp.DefaultMaxLineLength, negative: no bound) ends the connection.
func New(r io.ReadCloser, w io.WriteCloser, maxLineLength int) *Conn {
	if maxLineLength == 0 {
		maxLineLength = mcp.DefaultMaxLineLength
	}
	incoming := make(chan frame)
	c := &Conn{r: r, w: w, incoming: incoming, closed: make(chan struct{}), readDone: make(chan struct{})}
	go c.readLoop(r, maxLineLength, incoming)
	return c
}

// NewServer is New for the server side of a session: it reads requests from
// r and writes their answers to w (see the package comment on batches).
func NewServer(r io.ReadCloser, w io.WriteCloser, maxLineLength int) *Conn {
	c := New(r, w, maxLineLength)
	c.server = true
	return c
}

// Transport hands the SDK a connection made beforehand (mcp.Transport).
type Transport struct{ Conn *Conn }

// Connect implements mcp.Transport.
func (t Transport) Connect(context.Context) (mcp.Connection, error) { return t.Conn, nil }

// batch is an incoming batch's requests and their answers so far.
type batch struct {
	pending   map[jsonrpc.ID]int // request id -> its place in responses
	responses []*jsonrpc.Response
}

// batchFrom is the SDK's 2025-06-18: a session of that protocol version or
// a later one takes no batches.
const batchFrom = "2025-06-18"

// readLoop sends each message read from r, decoded unless it is a batch,
// or the error that ends r. The answer to a request of Call goes to its
// caller instead, from here, without a hand-off to the SDK's reader.
func (c *Conn) readLoop(r io.Reader, limit int, out chan<- frame) {
	in := newFrames(r, limit)
	for {
		raw, err := in.next()
		f := frame{raw: raw, err: err}
		if err == nil && !bytes.HasPrefix(raw, []byte("[")) {
			f.msg, f.err = decodeValid(raw) // next validated it
			f.raw = nil
			if f.err == nil && (c.calls.claim(f.msg) || c.taken(f.msg)) {
				continue
			}
		}
		if f.err != nil {
			c.readErr = f.err
			close(c.readDone)
		}
		select {
		case out <- f:
		case <-c.closed:
			if f.err == nil {
				c.readErr = io.EOF
				close(c.readDone)
			}
			return
		}
		if f.err != nil {
			return
		}
	}
}

// SetTake has the reading goroutine offer take each message read on its
// own (a batch's go to Read whole), before Read would deliver it: a
// message take reports taken is not delivered. take runs on the reading
// goroutine and must not block. pml stdio's direct tools/call path takes
// its calls here (docs/architecture.md "pml stdio").
func (c *Conn) SetTake(take func(jsonrpc.Message) bool) { c.take.Store(&take) }

// taken offers msg to the function SetTake set.
func (c *Conn) taken(msg jsonrpc.Message) bool {
	take := c.take.Load()
	return take != nil && (*take)(msg)
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
	if f.msg != nil {
		return c.noteInit(f.msg), nil
	}
	msgs, err := decodeBatch(f.raw)
	if err != nil {
		return nil, err
	}
	if c.server {
		if err := c.addBatch(msgs); err != nil {
			return nil, err
		}
	}
	// Answers to Call's requests in a server's batch go to their callers.
	msgs = slices.DeleteFunc(msgs, c.calls.claim)
	if len(msgs) == 0 {
		return c.Read(ctx)
	}
	c.queue = msgs[1:]
	return c.noteInit(msgs[0]), nil
}

// noteInit remembers the id of a server's initialize request, whose answer
// says the protocol version.
func (c *Conn) noteInit(msg jsonrpc.Message) jsonrpc.Message {
	if req, ok := msg.(*jsonrpc.Request); ok && c.server && req.Method == "initialize" {
		c.mu.Lock()
		c.initID = req.ID
		c.mu.Unlock()
	}
	return msg
}

// addBatch records the requests of an incoming batch, to answer them in
// one array, as the SDK does: refused once the session's protocol takes no
// batches, or when a request id repeats one still unanswered.
func (c *Conn) addBatch(msgs []jsonrpc.Message) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.negotiate >= batchFrom {
		return fmt.Errorf("JSON-RPC batching is not supported in %s and later (request version: %s)", batchFrom, c.negotiate)
	}
	b := &batch{pending: map[jsonrpc.ID]int{}}
	for _, msg := range msgs {
		req, ok := msg.(*jsonrpc.Request)
		if !ok || !req.ID.IsValid() {
			continue
		}
		if _, dup := b.pending[req.ID]; dup {
			return fmt.Errorf("duplicate message ID %q", req.ID)
		}
		if _, dup := c.batches[req.ID]; dup {
			return fmt.Errorf("JSON RPC invalid request: batch contains previously seen request %v", req.ID.Raw())
		}
		b.pending[req.ID] = len(b.responses)
		b.responses = append(b.responses, nil)
	}
	if c.batches == nil {
		c.batches = map[jsonrpc.ID]*batch{}
	}
	for id := range b.pending {
		c.batches[id] = b
	}
	return nil
}

// answered takes a server's response: held (nil, true) while its batch
// waits for other answers, the whole batch once complete, or (nil, false)
// for a response to a request that came alone. It also notes the protocol
// version the initialize answer negotiated.
func (c *Conn) answered(resp *jsonrpc.Response) ([]*jsonrpc.Response, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.initID.IsValid() && resp.ID == c.initID {
		var res struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		if json.Unmarshal(resp.Result, &res) == nil {
			c.negotiate = res.ProtocolVersion
		}
		c.initID = jsonrpc.ID{}
	}
	b, ok := c.batches[resp.ID]
	if !ok {
		return nil, false
	}
	b.responses[b.pending[resp.ID]] = resp
	delete(b.pending, resp.ID)
	delete(c.batches, resp.ID)
	if len(b.pending) > 0 {
		return nil, true
	}
	return b.responses, true
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

// Write implements mcp.Connection: one message, one line; on a server, the
// answers to a batch's requests go together, in one array.
func (c *Conn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	var data []byte
	var err error
	if resp, ok := msg.(*jsonrpc.Response); ok && c.server {
		if all, inBatch := c.answered(resp); inBatch {
			if all == nil {
				return nil
			}
			data, err = encodeBatch(all)
		} else {
			data, err = EncodeMessage(msg)
		}
	} else {
		data, err = EncodeMessage(msg)
	}
	if err != nil {
		return fmt.Errorf("encode jsonrpc message: %w", err)
	}
	_, err = c.w.Write(append(data, '\n'))
	return err
}

func encodeBatch(resps []*jsonrpc.Response) ([]byte, error) {
	raws := make([]json.RawMessage, len(resps))
	for i, r := range resps {
		raw, err := EncodeMessage(r)
		if err != nil {
			return nil, err
		}
		raws[i] = raw
	}
	return json.Marshal(raws)
}

// EncodeMessage is jsonrpc.EncodeMessage(msg), but for a response with a
// result, which is JSON already (encoded by the SDK or by the direct
// tools/call paths): it goes into the envelope as it is, where
// EncodeMessage would check and compact its bytes once more, a few percent
// of a busy server's CPU (docs/performance.md "The direct tools/call
// path").
func EncodeMessage(msg jsonrpc.Message) ([]byte, error) {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok || resp.Error != nil || resp.Result == nil {
		return jsonrpc.EncodeMessage(msg)
	}
	id, err := json.Marshal(resp.ID.Raw())
	if err != nil {
		return nil, err
	}
	data := make([]byte, 0, len(`{"jsonrpc":"2.0","id":,"result":}`)+len(id)+len(resp.Result))
	data = append(append(append(data, `{"jsonrpc":"2.0","id":`...), id...), `,"result":`...)
	return append(append(data, resp.Result...), '}'), nil
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
