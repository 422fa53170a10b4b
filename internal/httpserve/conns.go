package httpserve

import (
	"container/list"
	"context"
	"crypto/tls"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// connTracker bounds the connections that have not yet presented a valid
// key. Past the bound it closes the oldest of them rather than refusing the
// new one: refusing would let a few hundred stalled sockets, reopened as
// they time out, lock every new client out, while closing the oldest only
// hurts a client that has not sent its key for longer than every other.
type connTracker struct {
	max int
	log *slog.Logger

	mu     sync.Mutex
	unauth list.List // of *trackedConn, oldest first

	evicted    atomic.Int64
	lastLogged atomic.Int64 // unix nanoseconds of the last eviction warning
}

func newConnTracker(maxConns int, log *slog.Logger) *connTracker {
	return &connTracker{max: maxConns, log: log}
}

// trackedConn is a connection the tracker follows until it authenticates or
// closes.
type trackedConn struct {
	net.Conn
	t    *connTracker
	elem *list.Element // in t.unauth while unauthenticated; guarded by t.mu
}

type trackedConnKey struct{}

// connContext is the http.Server's ConnContext: it lets MarkAuthenticated find the
// request's connection.
func (t *connTracker) connContext(ctx context.Context, c net.Conn) context.Context {
	// Over TLS the server hands over the TLS connection wrapped around ours.
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	if tc, ok := c.(*trackedConn); ok {
		return context.WithValue(ctx, trackedConnKey{}, tc)
	}
	return ctx
}

func (t *connTracker) listener(ln net.Listener) net.Listener { return trackingListener{ln, t} }

type trackingListener struct {
	net.Listener
	t *connTracker
}

func (l trackingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return l.t.add(c), nil
}

func (t *connTracker) add(c net.Conn) *trackedConn {
	tc := &trackedConn{Conn: c, t: t}
	var oldest *trackedConn
	t.mu.Lock()
	tc.elem = t.unauth.PushBack(tc)
	if t.unauth.Len() > t.max {
		oldest = t.unauth.Remove(t.unauth.Front()).(*trackedConn)
		oldest.elem = nil
	}
	t.mu.Unlock()
	if oldest != nil {
		// Closing the socket ends the server's read on it; the server then
		// closes the trackedConn, which finds it already untracked.
		_ = oldest.Conn.Close()
		t.noteEviction()
	}
	return tc
}

// evictionLogEvery rate-limits the warning about evictions.
const evictionLogEvery = time.Minute

func (t *connTracker) noteEviction() {
	n := t.evicted.Add(1)
	now := time.Now().UnixNano()
	last := t.lastLogged.Load()
	if now-last >= int64(evictionLogEvery) && t.lastLogged.CompareAndSwap(last, now) {
		t.log.Warn("too many connections without a valid key: closing the oldest",
			"max_unauthenticated_connections", t.max, "closed_so_far", n)
	}
}

// unauthenticated is how many tracked connections have not authenticated.
func (t *connTracker) unauthenticated() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.unauth.Len()
}

// untrack takes c off the unauthenticated list, if it is still there.
func (c *trackedConn) untrack() {
	c.t.mu.Lock()
	if c.elem != nil {
		c.t.unauth.Remove(c.elem)
		c.elem = nil
	}
	c.t.mu.Unlock()
}

func (c *trackedConn) Close() error {
	c.untrack()
	return c.Conn.Close()
}

// CloseWrite lets the server half-close before closing, as it does on a
// bare TCP connection, so a client still sending a body it will never read
// receives the response rather than a reset.
func (c *trackedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// MarkAuthenticated records that the request's connection presented a
// valid key: it no longer counts against the bound.
func MarkAuthenticated(ctx context.Context) {
	if tc, ok := ctx.Value(trackedConnKey{}).(*trackedConn); ok {
		tc.untrack()
	}
}
