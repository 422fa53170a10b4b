// Package httpserve is the HTTP serving pml's servers share: the gateway
// (internal/gateway) and the package's `pml serve` (internal/workspace).
// Header, body and idle timeouts, the bytes of bodies held in memory (per
// tenant when the handler names one), a bound on connections that have not
// authenticated, and a shutdown that drains (docs/limits.md "HTTP and tool
// limits"). It knows nothing of keys or tenants beyond what its caller tells
// it, so the package can serve without reaching into the gateway.
package httpserve

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/pml-go/pml/internal/wire"
)

// Limits bound what clients can hold on an HTTP server of pml: the
// gateway and `pml serve` (docs/limits.md "HTTP and tool limits"). Zero fields take
// the defaults.
type Limits struct {
	// ReadHeaderTimeout is how long a connection may take to send a
	// request's headers (default 10 s).
	ReadHeaderTimeout time.Duration
	// BodyTimeout is how long a request's body may take to arrive, from
	// the end of its headers (default 30 s); a slower one gets 408.
	BodyTimeout time.Duration
	// IdleTimeout closes a keep-alive connection idle this long (default 2 min).
	IdleTimeout time.Duration
	// MaxBufferedBytes bounds the bytes of request bodies held in memory at
	// once, over all requests (default 64 MiB); one tenant may hold a
	// quarter of it. A request that would pass either waits for room for
	// up to half its body timeout, then gets 503.
	MaxBufferedBytes int64
	// MaxUnauthConns bounds the connections that have not yet presented a
	// valid key (default 512); past it the oldest such connection is closed.
	// Negative: no bound, for servers without keys.
	MaxUnauthConns int
	// PublicHosts are the host names, besides this machine's own, that MCP
	// requests arriving on a loopback address may name in their Host
	// header: those a reverse proxy on this machine forwards. Others get 403
	// (DNS rebinding). See the gateway's CheckPublicHost.
	PublicHosts []string
	// ShutdownGrace is how long requests in flight get to finish when the
	// server stops (default 2 s); then their contexts are cancelled, the
	// path of a client's cancellation, which also ends long-lived event
	// streams that would otherwise hold the shutdown open.
	ShutdownGrace time.Duration
}

// Defaults of Limits.
const (
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultBodyTimeout       = 30 * time.Second
	DefaultIdleTimeout       = 2 * time.Minute
	DefaultMaxBufferedBytes  = 64 << 20
	DefaultMaxUnauthConns    = 512
	DefaultShutdownGrace     = 2 * time.Second
)

func (l Limits) withDefaults() Limits {
	if l.ReadHeaderTimeout <= 0 {
		l.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if l.BodyTimeout <= 0 {
		l.BodyTimeout = DefaultBodyTimeout
	}
	if l.IdleTimeout <= 0 {
		l.IdleTimeout = DefaultIdleTimeout
	}
	if l.MaxBufferedBytes <= 0 {
		l.MaxBufferedBytes = DefaultMaxBufferedBytes
	}
	// One largest body must always fit, or it would wait forever.
	l.MaxBufferedBytes = max(l.MaxBufferedBytes, wire.MaxRequestBytes+1)
	if l.MaxUnauthConns == 0 {
		l.MaxUnauthConns = DefaultMaxUnauthConns
	}
	if l.ShutdownGrace <= 0 {
		l.ShutdownGrace = DefaultShutdownGrace
	}
	return l
}

// Server serves a handler within Limits.
type Server struct {
	srv   *http.Server
	conns *connTracker // nil when unauthenticated connections are not bounded
	log   *slog.Logger
	// cancelRequests ends the contexts of requests still running after the
	// shutdown grace.
	cancelRequests context.CancelFunc
	grace          time.Duration
}

// New serves h within lim. h must bound its request bodies itself
// (LimitBodies does); the server bounds headers, idle connections and, unless
// lim.MaxUnauthConns is negative, connections that present no valid key.
func New(h http.Handler, lim Limits, log *slog.Logger) *Server {
	lim = lim.withDefaults()
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	base, cancel := context.WithCancel(context.Background())
	s := &Server{log: log, cancelRequests: cancel, grace: lim.ShutdownGrace}
	s.srv = &http.Server{
		Handler:           h,
		ReadHeaderTimeout: lim.ReadHeaderTimeout,
		IdleTimeout:       lim.IdleTimeout,
		BaseContext:       func(net.Listener) context.Context { return base },
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	if lim.MaxUnauthConns > 0 {
		s.conns = newConnTracker(lim.MaxUnauthConns, log)
		s.srv.ConnContext = s.conns.connContext
	}
	return s
}

// Serve serves on ln until ctx ends, then drains (Limits.ShutdownGrace) and
// returns nil; or until the server fails or is closed.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	defer s.cancelRequests()
	if s.conns != nil {
		ln = s.conns.listener(ln)
	}
	errc := make(chan error, 1)
	go func() {
		if s.srv.TLSConfig != nil {
			// The certificate is in TLSConfig already; ServeTLS adds HTTP/2.
			errc <- s.srv.ServeTLS(ln, "", "")
			return
		}
		errc <- s.srv.Serve(ln)
	}()
	select {
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return fmt.Errorf("serve %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	drained := make(chan struct{})
	defer close(drained)
	go func() {
		select {
		case <-time.After(s.grace):
			s.cancelRequests()
		case <-drained:
		}
	}()
	shutdown, cancel := context.WithTimeout(context.Background(), s.grace+3*time.Second)
	defer cancel()
	if err := s.srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		s.log.Warn("closing connections still open after the drain", "err", err)
		_ = s.srv.Close()
	}
	return nil
}

// UseTLS makes Serve speak HTTPS with cert. Call it before Serve. The TLS
// handshake counts against ReadHeaderTimeout, and a connection still in it
// counts as one without a valid key.
func (s *Server) UseTLS(cert tls.Certificate) {
	s.srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
}

// Wrap puts mw around the server's handler, outermost: it sees every
// request, from its headers read to its answer written. Call it before
// Serve.
func (s *Server) Wrap(mw func(http.Handler) http.Handler) {
	s.srv.Handler = mw(s.srv.Handler)
}

// Scheme is "https" after UseTLS, else "http".
func (s *Server) Scheme() string {
	if s.srv.TLSConfig != nil {
		return "https"
	}
	return "http"
}

// CancelRequests cancels the contexts of every request in flight, the path
// of a client's cancellation: their runs stop and answer, their traces are
// kept. A draining gateway calls it when its grace runs out.
func (s *Server) CancelRequests() { s.cancelRequests() }

// Close closes the listener and every connection at once.
func (s *Server) Close() error {
	s.cancelRequests()
	return s.srv.Close()
}
