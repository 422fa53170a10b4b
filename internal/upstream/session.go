package upstream

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/rawio"
	"github.com/pml-go/pml/internal/stdioconn"
	"github.com/pml-go/pml/internal/tools"
)

// session is one live connection to a server: the SDK client session, the
// transport connection under it and, for stdio, the child process.
type session struct {
	cs   *mcp.ClientSession
	conn mcp.Connection // closed directly to fail in-flight calls: cs.Close waits for them
	proc *process       // nil for http servers
	// direct, for a stdio server whose session speaks a protocol before
	// 2026-07-28, is the connection tools/call goes through without the
	// SDK's client (callDirect); nil otherwise.
	direct *stdioconn.Conn

	deadOnce sync.Once
	dead     chan struct{} // closed once the session may serve no more calls
	deadErr  error         // why; set before dead is closed

	// Guarded by the owning Server's mu.
	inflight  int
	lastUse   time.Time
	idleTimer *time.Timer
	tools     []tools.Info // tools/list result, cached for the session's life
}

// errStopped is the reason of a session stopped on purpose (idle, Close,
// replacement), as opposed to one that died.
var errStopped = errors.New("stopped")

// markDead records why the session ended; the first reason wins.
func (ss *session) markDead(err error) {
	ss.deadOnce.Do(func() {
		ss.deadErr = err
		close(ss.dead)
	})
}

func (ss *session) isDead() bool {
	select {
	case <-ss.dead:
		return true
	default:
		return false
	}
}

// connectedTransport hands the SDK a connection we opened ourselves, so we
// keep a handle on it.
type connectedTransport struct{ conn mcp.Connection }

func (t connectedTransport) Connect(context.Context) (mcp.Connection, error) { return t.conn, nil }

// connect starts the server (stdio) or reaches it (http, sse) and completes the
// MCP handshake within ctx.
func (s *Server) connect(ctx context.Context) (*session, error) {
	typ, err := s.cfg.transportType()
	if err != nil {
		return nil, err
	}
	ss := &session{dead: make(chan struct{})}
	var stdio *stdioconn.Conn
	switch typ {
	case TypeStdio:
		ss.proc, err = startProcess(s.cfg, s.pool.opts.MinimalEnv, s.pool.opts.Logger)
		if err != nil {
			return nil, err
		}
		// The SDK's IOTransport, but decoding each message once (stdioconn),
		// over pipes read and written with raw system calls (rawio).
		stdio = stdioconn.New(rawio.Raw(ss.proc.stdout), rawio.Raw(ss.proc.stdin), 0)
		ss.conn = stdio
	case TypeSSE:
		ss.conn, err = connectSSE(ctx, s.cfg.URL, httpClient(s.pool.transport, s.cfg.Headers, s.pool.opts.StopGrace))
	default:
		t := &mcp.StreamableClientTransport{Endpoint: s.cfg.URL, HTTPClient: httpClient(s.pool.transport, s.cfg.Headers, s.pool.opts.StopGrace)}
		if t.OAuthHandler, err = s.oauthHandler(); err != nil {
			return nil, err
		}
		ss.conn, err = t.Connect(ctx)
	}
	if err == nil {
		ss.cs, err = s.pool.client.Connect(ctx, connectedTransport{ss.conn}, nil)
	}
	if err != nil {
		return nil, s.handshakeError(ctx, ss, err)
	}
	if stdio != nil && plainCalls(ss.cs.InitializeResult()) {
		ss.direct = stdio
	}
	return ss, nil
}

// handshakeError cleans up after a failed handshake and explains it, using
// the child's exit status when it died, which is the usual cause.
func (s *Server) handshakeError(ctx context.Context, ss *session, err error) error {
	if ss.conn != nil {
		defer ss.conn.Close()
	}
	if ss.proc == nil {
		return fmt.Errorf("connect to %s: %w", s.cfg.URL, err)
	}
	exited := ss.proc.waitExit(exitSettle)
	ss.proc.stop(s.pool.opts.StopGrace)
	switch {
	case exited:
		return fmt.Errorf("exited during startup: %w", ss.proc.exitError())
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("no answer to the MCP handshake within %s", s.pool.opts.StartTimeout)
	default:
		return fmt.Errorf("MCP handshake: %w", err)
	}
}

// exitSettle is how long we let a child's exit status arrive after its
// stdout closed: the EOF usually beats cmd.Wait by a moment.
const exitSettle = 500 * time.Millisecond

// watch waits for the session to end, for any reason, then tears it down:
// the child is stopped and reaped, and calls still in flight fail at once.
func (s *Server) watch(ss *session) {
	connDone := make(chan struct{})
	go func() {
		_ = ss.cs.Wait()
		close(connDone)
	}()
	var exited <-chan struct{} // nil, so never ready, for http
	if ss.proc != nil {
		exited = ss.proc.exited
	}
	select {
	case <-exited:
		ss.markDead(fmt.Errorf("MCP server %s exited: %w", s.name, ss.proc.exitError()))
	case <-connDone:
		if ss.proc != nil && ss.proc.waitExit(exitSettle) {
			ss.markDead(fmt.Errorf("MCP server %s exited: %w", s.name, ss.proc.exitError()))
		} else {
			ss.markDead(fmt.Errorf("MCP server %s closed the connection", s.name))
		}
	case <-ss.dead:
	}
	s.forget(ss)
	if ss.proc != nil {
		ss.proc.stop(s.pool.opts.StopGrace)
	}
	_ = ss.conn.Close()
	_ = ss.cs.Close()
	<-connDone
	s.pool.opts.Logger.Debug("mcp server session ended", "server", s.name, "reason", ss.deadErr)
}
