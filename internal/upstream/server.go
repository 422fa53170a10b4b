package upstream

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/tools"
)

// Server is one configured MCP server. It implements tools.Provider for the
// namespace of its name: tool ids are "name:tool".
type Server struct {
	name string
	cfg  ServerConfig
	pool *Pool

	mu          sync.Mutex
	closed      bool
	sess        *session      // the live session, if any
	starting    *startAttempt // the start in progress, if any
	everStarted bool
	failures    int       // consecutive failed starts
	retryAt     time.Time // no new start before this, after failures
	lastErr     error     // why the last start failed
	// known is the last tool list a session returned; it outlives the
	// session, so the registry can describe an idle server without starting it.
	known []tools.Info
	// validator checks the arguments of a failed call, to tell the AI
	// client a call it can fix (invalidArgs).
	validator *tools.Validator
}

// startAttempt is one start in progress; every caller that needs the server
// meanwhile waits on the same attempt.
type startAttempt struct {
	done   chan struct{}
	cancel context.CancelFunc
	sess   *session // set before done is closed, on success
	err    error    // set before done is closed, on failure
}

// Name returns the server's name, which is its tool namespace.
func (s *Server) Name() string { return s.name }

// Running reports whether the server has a live session (for stdio: a
// running process).
func (s *Server) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sess != nil && !s.sess.isDead()
}

// acquire returns a live session, starting the server if needed, and counts
// the caller as in flight until release.
func (s *Server) acquire(ctx context.Context) (*session, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, s.toolError("MCP server %s is stopped", s.name)
	}
	if ss := s.sess; ss != nil && !ss.isDead() {
		s.use(ss)
		s.mu.Unlock()
		return ss, nil
	}
	st := s.starting
	if st == nil {
		if wait := time.Until(s.retryAt); wait > 0 {
			err := s.toolError("MCP server %s failed to start %d time(s) in a row, next attempt in %s: %v",
				s.name, s.failures, wait.Round(time.Millisecond), s.lastErr)
			s.mu.Unlock()
			return nil, err
		}
		st = s.beginStart()
	}
	s.mu.Unlock()

	select {
	case <-st.done:
	case <-ctx.Done():
		return nil, ctxError(ctx, "starting MCP server "+s.name)
	}
	if st.err != nil {
		return nil, st.err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// Use the session this attempt made even if it already died, rather than
	// loop: a server that dies right after each start must not spin us.
	if st.sess.isDead() {
		return nil, &pmlerr.Error{Code: pmlerr.ToolError, Message: st.sess.deadErr.Error(), Err: st.sess.deadErr}
	}
	s.use(st.sess)
	return st.sess, nil
}

// use counts one more caller on ss. s.mu must be held.
func (s *Server) use(ss *session) {
	ss.inflight++
	if ss.idleTimer != nil {
		ss.idleTimer.Stop()
	}
}

// release ends a caller's use of ss and arms the idle stop when it was the last.
func (s *Server) release(ss *session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss.inflight--
	ss.lastUse = time.Now()
	idle := s.pool.opts.IdleTimeout
	if ss.inflight > 0 || idle < 0 || ss.isDead() {
		return
	}
	if ss.idleTimer == nil {
		ss.idleTimer = time.AfterFunc(idle, func() { s.stopIfIdle(ss) })
	} else {
		ss.idleTimer.Reset(idle)
	}
}

// stopIfIdle stops ss if nobody used it for IdleTimeout. The timer can fire
// late, racing a new use, so the condition is checked again under the lock.
func (s *Server) stopIfIdle(ss *session) {
	s.mu.Lock()
	idle := ss.inflight == 0 && s.sess == ss && time.Since(ss.lastUse) >= s.pool.opts.IdleTimeout
	if idle {
		s.sess = nil
	}
	s.mu.Unlock()
	if idle {
		s.pool.opts.Logger.Debug("stopping idle mcp server", "server", s.name)
		ss.markDead(fmt.Errorf("MCP server %s was %w after being idle", s.name, errStopped))
	}
}

// forget drops ss as the live session once it ended.
func (s *Server) forget(ss *session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sess == ss {
		s.sess = nil
	}
	if ss.idleTimer != nil {
		ss.idleTimer.Stop()
	}
}

// beginStart launches a start in the background, bounded by StartTimeout
// rather than by the first caller's ctx: the server outlives the call that
// happened to start it, and other callers may be waiting on it. s.mu must be held.
func (s *Server) beginStart() *startAttempt {
	ctx, cancel := context.WithTimeout(context.Background(), s.pool.opts.StartTimeout)
	st := &startAttempt{done: make(chan struct{}), cancel: cancel}
	s.starting = st
	s.pool.running.Add(1)
	go func() {
		defer s.pool.running.Done()
		defer cancel()
		s.finishStart(ctx, st)
	}()
	return st
}

func (s *Server) finishStart(ctx context.Context, st *startAttempt) {
	ss, err := s.connect(ctx)

	s.mu.Lock()
	s.starting = nil
	closed := s.closed
	restart := s.everStarted
	switch {
	case err != nil && closed:
		st.err = s.toolError("MCP server %s is stopped", s.name)
	case err != nil && unauthorized(err):
		// No back-off: the fix (pml connect) happens outside, and the
		// next call must see it at once.
		s.lastErr = err
		st.err = &pmlerr.Error{Code: pmlerr.Unauthorized, Err: err,
			Message: fmt.Sprintf("MCP server %s: %s", s.name, pmlerr.Message(err)),
			Details: map[string]any{"server": s.name}}
	case err != nil:
		s.failures++
		s.lastErr = err
		s.retryAt = time.Now().Add(startBackoff(s.failures))
		st.err = &pmlerr.Error{Code: pmlerr.ToolError, Err: err,
			Message: fmt.Sprintf("MCP server %s failed to start: %v", s.name, err),
			Details: map[string]any{"server": s.name}}
	default:
		s.failures, s.lastErr, s.retryAt = 0, nil, time.Time{}
		s.everStarted = true
		st.sess = ss
		if !closed {
			s.sess = ss
		}
		s.pool.running.Add(1)
		go func() {
			defer s.pool.running.Done()
			s.watch(ss)
		}()
	}
	s.mu.Unlock()

	if err != nil {
		s.pool.opts.Logger.Warn("mcp server failed to start", "server", s.name, "error", err)
	} else if closed {
		ss.markDead(fmt.Errorf("MCP server %s was %w", s.name, errStopped))
	} else {
		s.pool.opts.Logger.Debug("mcp server started", "server", s.name, "restart", restart)
		if s.pool.opts.OnStart != nil {
			s.pool.opts.OnStart(s.name, restart)
		}
	}
	close(st.done)
}

// startBackoff is the pause after n consecutive failed starts: 250 ms
// doubling up to 30 s, so a server that cannot start costs little.
func startBackoff(n int) time.Duration {
	const base, ceiling = 250 * time.Millisecond, 30 * time.Second
	if n > 8 {
		return ceiling
	}
	return min(base<<(n-1), ceiling)
}

// shutdown stops the server for good (Pool.Close, replacement by Add).
func (s *Server) shutdown() {
	s.mu.Lock()
	s.closed = true
	ss, st := s.sess, s.starting
	s.sess = nil
	s.mu.Unlock()
	if st != nil {
		st.cancel()
	}
	if ss != nil {
		ss.markDead(fmt.Errorf("MCP server %s was %w", s.name, errStopped))
	}
}

func (s *Server) toolError(format string, args ...any) *pmlerr.Error {
	return pmlerr.New(pmlerr.ToolError, format, args...).With("server", s.name)
}

// ctxError turns the end of a caller's ctx during what (e.g. "calling
// fs:read") into the error it sees: a missed deadline is RPC_TIMEOUT; a
// cancellation stays context.Canceled.
func ctxError(ctx context.Context, what string) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &pmlerr.Error{Code: pmlerr.RPCTimeout, Err: ctx.Err(),
			Message: what + ": no answer before the deadline"}
	}
	return fmt.Errorf("%s: %w", what, ctx.Err())
}
