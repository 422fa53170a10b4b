package mcpdirect

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/afteranswer"
	"github.com/pml-go/pml/internal/stdioconn"
	"github.com/pml-go/pml/internal/workers"
)

// methodCancelled is the notification that cancels a request.
const methodCancelled = "notifications/cancelled"

// ServeStdio serves srv to one client over conn until the client closes
// it or ctx ends, as srv.Run does, except for the session's plain tool
// calls: a tools/call the SDK would answer with a tool's result, read once
// the session is initialized, is taken on conn's reading goroutine and
// served on a goroutine of its own (one a finished call left idle, if
// any) by the same receiving middleware and tool handler, with the real
// session, and answered as the SDK's connection would answer it
// (docs/architecture.md "pml stdio"). Calls are served concurrently, and
// notifications/cancelled cancels a call's context, as with the SDK.
// Everything else goes to the SDK unchanged.
//
// ServeStdio adds a receiving middleware to srv, outermost, which takes
// the SDK's own handler chain: srv must be served only here. With
// MCPGODEBUG set, the SDK may answer otherwise than its defaults, which the
// direct path knows: the SDK serves every request then.
func ServeStdio(ctx context.Context, srv *mcp.Server, conn *stdioconn.Conn) error {
	if os.Getenv("MCPGODEBUG") != "" {
		return srv.Run(ctx, stdioconn.Transport{Conn: conn})
	}
	return serveStdio(ctx, srv, conn, nil)
}

// serveStdio is ServeStdio, telling taken (when not nil) the id of each
// call the direct path takes.
func serveStdio(ctx context.Context, srv *mcp.Server, conn *stdioconn.Conn, taken func(jsonrpc.ID)) error {
	s := &stdioCalls{conn: conn, inflight: map[jsonrpc.ID]context.CancelFunc{}, workers: workers.New(), taken: taken}
	s.base, s.stop = context.WithCancel(context.WithoutCancel(ctx))
	defer s.stop()
	defer s.workers.Close()
	srv.AddReceivingMiddleware(s.capture)
	conn.SetTake(s.take)
	ss, err := srv.Connect(ctx, sessionTransport{s}, nil)
	if err != nil {
		return fmt.Errorf("connecting the stdio session: %w", err)
	}
	s.session.CompareAndSwap(nil, ss)
	closed := make(chan error, 1)
	go func() { closed <- ss.Wait() }()
	select {
	case <-ctx.Done():
		s.stop()
		_ = ss.Close()
		<-closed
		s.calls.Wait()
		_ = conn.Close()
		return ctx.Err()
	case err := <-closed:
		s.calls.Wait()
		_ = conn.Close()
		return err
	}
}

// stdioCalls is one stdio session's direct tools/call path.
type stdioCalls struct {
	conn    *stdioconn.Conn
	handle  mcp.MethodHandler // the SDK's receiving chain (capture)
	session atomic.Pointer[mcp.ServerSession]

	base context.Context // the calls' contexts; stop ends them
	stop context.CancelFunc

	mu       sync.Mutex
	inflight map[jsonrpc.ID]context.CancelFunc // calls being served, by id
	calls    sync.WaitGroup
	workers  *workers.Pool // the goroutines calls are served on

	taken func(jsonrpc.ID) // tests: each call taken
}

// capture is a receiving middleware that keeps the handler it wraps, the
// server's whole receiving chain, and adds nothing to the SDK's path but
// noting the session at initialize: the first call after it may come
// before Connect has returned the session to serveStdio.
func (s *stdioCalls) capture(next mcp.MethodHandler) mcp.MethodHandler {
	s.handle = next
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if ss, ok := req.GetSession().(*mcp.ServerSession); ok && method == "initialize" {
			s.session.CompareAndSwap(nil, ss)
		}
		return next(ctx, method, req)
	}
}

// take serves msg when it is a call the direct path answers as the SDK
// would (call), and cancels a direct call a notifications/cancelled names
// (which the SDK sees as well, and ignores: the call is not its own).
func (s *stdioCalls) take(msg jsonrpc.Message) bool {
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		return false
	}
	if req.Method == methodCancelled {
		s.cancel(req.Params)
		return false
	}
	params, ok := s.call(req)
	if !ok {
		return false
	}
	ss := s.session.Load()
	ctx, cancel := context.WithCancel(s.base)
	s.mu.Lock()
	if _, dup := s.inflight[req.ID]; dup {
		// The SDK refuses a repeated id of a call in flight; the direct
		// path leaves that to it.
		s.mu.Unlock()
		cancel()
		return false
	}
	s.inflight[req.ID] = cancel
	s.calls.Add(1)
	s.mu.Unlock()
	if s.taken != nil {
		s.taken(req.ID)
	}
	s.workers.Go(func() { s.serve(ctx, ss, req.ID, params) })
	return true
}

// call returns req's params when req is a call the direct path serves: a
// tools/call (not in a batch: those never reach take) of an initialized
// session, with params every key of which the SDK reads (CallParams), no
// progress token (its notifications are kept apart from the answer by
// pml stdio's writer, on the SDK's path) and no protocol version in _meta
// (a request of protocol 2026-07-28, which the SDK checks and marks).
func (s *stdioCalls) call(req *jsonrpc.Request) (*mcp.CallToolParamsRaw, bool) {
	if req.Method != MethodCallTool || !req.ID.IsValid() || HasProgressToken(req.Params) {
		return nil, false
	}
	ss := s.session.Load()
	if ss == nil || ss.InitializeParams() == nil {
		return nil, false
	}
	params, ok := CallParams(req.Params)
	if !ok {
		return nil, false
	}
	if _, named := params.Meta[mcp.MetaKeyProtocolVersion]; named {
		return nil, false
	}
	return params, true
}

// serve runs one call through the server's receiving chain and writes its
// answer. As the SDK does, the call leaves the calls in flight before its
// answer is written (the client may reuse its id then), and the answer is
// written even when the call was cancelled. What the call deferred until
// its answer is written (internal/afteranswer: a run's trace) runs after
// the write, before the call counts as done, so a session's end waits for
// it.
func (s *stdioCalls) serve(ctx context.Context, ss *mcp.ServerSession, id jsonrpc.ID, params *mcp.CallToolParamsRaw) {
	defer s.calls.Done()
	ctx, after := afteranswer.With(ctx)
	defer after.Run()
	res, err := s.handle(ctx, MethodCallTool, &mcp.CallToolRequest{Session: ss, Params: params})
	s.mu.Lock()
	cancel := s.inflight[id]
	delete(s.inflight, id)
	s.mu.Unlock()
	cancel()
	// A write that fails has lost the client: the session ends with its
	// reading, as the SDK's would.
	_ = s.conn.Write(context.WithoutCancel(ctx), Response(id, res, err))
}

// cancel cancels the direct call that a notifications/cancelled's params
// name, if it is in flight. Its requestId is read as the SDK reads it.
func (s *stdioCalls) cancel(raw json.RawMessage) {
	var params map[string]json.RawMessage
	if json.Unmarshal(raw, &params) != nil {
		return
	}
	var v any
	if json.Unmarshal(params["requestId"], &v) != nil {
		return
	}
	id, err := jsonrpc.MakeID(v)
	if err != nil {
		return
	}
	s.mu.Lock()
	cancel := s.inflight[id]
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// Response is the JSON-RPC answer the SDK's connection writes for a
// handler's result and error: the error when there is one (its code, or 0
// for an error that is not a *jsonrpc.Error nor wraps one, as
// jsonrpc.EncodeMessage reads it), else the result as the SDK encodes it
// (EncodeResult). A result that cannot be encoded is an internal error (the
// SDK would leave the request unanswered).
func Response(id jsonrpc.ID, res mcp.Result, err error) *jsonrpc.Response {
	resp := &jsonrpc.Response{ID: id}
	if err != nil {
		resp.Error = err
		return resp
	}
	if res == nil {
		resp.Error = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "a handler returned no result"}
		return resp
	}
	data, err := EncodeResult(res)
	if err != nil {
		resp.Error = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("encoding the result: %v", err)}
		return resp
	}
	resp.Result = data
	return resp
}

// sessionTransport hands the SDK conn, closed only once the direct calls
// in flight have written their answers (sessionConn).
type sessionTransport struct{ s *stdioCalls }

// Connect implements mcp.Transport.
func (t sessionTransport) Connect(context.Context) (mcp.Connection, error) {
	return sessionConn{Conn: t.s.conn, calls: &t.s.calls}, nil
}

// sessionConn is the SDK's side of the connection. The SDK closes it once
// its own calls are answered, but the direct calls are not its own: the
// streams close when those are answered too. The SDK's connection calls
// Close holding its lock, which a call's handler may want (to log, to
// ask), so Close does not wait for them itself.
type sessionConn struct {
	*stdioconn.Conn
	calls *sync.WaitGroup
}

// Close implements mcp.Connection.
func (c sessionConn) Close() error {
	go func() {
		c.calls.Wait()
		_ = c.Conn.Close()
	}()
	return nil
}
