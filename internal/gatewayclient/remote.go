package gatewayclient

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/buildinfo"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/rawio"
	"github.com/pml-go/pml/internal/wire"
)

// ConnectTimeout bounds reaching the gateway: an unreachable gateway is a
// prompt NETWORK_ERROR, not a hang.
const ConnectTimeout = 5 * time.Second

// Remote is a gateway reached over MCP Streamable HTTP and its HTTP API.
type Remote struct {
	url       string
	urlSource string // where url came from (PML_CLOUD_URL, .pml.json cloud.url); "" when given directly
	http      *http.Client
	auth      *gatewayAuth
	cacheDir  string // routing rules cache

	localNS *atomic.Pointer[string] // the ClientNamespacesHeader value

	progress *progressRelay // gateway runs' progress, to the requests waiting on them

	// noPlainExecute: the gateway answered 404 to POST /api/v1/execute, as
	// one older than it does; Execute then goes over MCP.
	noPlainExecute atomic.Bool

	mu      sync.Mutex
	session *mcp.ClientSession

	// After a timeout reaching the gateway it counts as down for
	// ConnectTimeout: requests in that window fail at once instead of each
	// waiting out its own connect timeout, so a gateway that drops packets
	// costs one timeout. A refused connection fails fast by itself and marks
	// nothing, so a restarted gateway is used again at once.
	downMu    sync.Mutex
	downUntil time.Time
	downErr   error
}

// unreachable returns the last network error while the gateway counts as down.
func (g *Remote) unreachable() error {
	g.downMu.Lock()
	defer g.downMu.Unlock()
	if time.Now().Before(g.downUntil) {
		return g.downErr
	}
	return nil
}

// down turns err into a NETWORK_ERROR, remembering timeouts. An error that
// already carries a wire code (UNAUTHORIZED from the transport) is the
// gateway's answer, not its absence: it is returned as it is.
func (g *Remote) down(err error) error {
	if pe, ok := pmlerr.As(err); ok {
		return pe
	}
	ne := g.networkError(err)
	var nerr net.Error
	if !errors.Is(err, context.DeadlineExceeded) && !(errors.As(err, &nerr) && nerr.Timeout()) {
		return ne
	}
	g.downMu.Lock()
	defer g.downMu.Unlock()
	g.downUntil, g.downErr = time.Now().Add(ConnectTimeout), ne
	return ne
}

// NewRemote returns a client for the gateway at baseURL (without /mcp).
// The key is sent to that scheme and host only; Open has checked that it
// does not travel in clear text to another machine. cacheDir holds the
// routing rules cache; "" disables it.
func NewRemote(baseURL, apiKey, cacheDir string) *Remote {
	return newRemote(baseURL, apiKey, cacheDir, nil)
}

// rawDial dials with d, and reads and writes the connection with raw
// system calls (rawio.Conn): the package goes idle between requests, and
// each socket call woke the runtime's monitor thread.
func rawDial(d *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return rawio.NewConn(c), nil
	}
}

// newRemote is NewRemote verifying the gateway's certificate with roots
// (nil: the system's).
func newRemote(baseURL, apiKey, cacheDir string, roots *x509.CertPool) *Remote {
	dialer := &net.Dialer{Timeout: ConnectTimeout, KeepAlive: 30 * time.Second}
	transport := &http.Transport{
		DialContext:           rawDial(dialer),
		TLSHandshakeTimeout:   ConnectTimeout,
		TLSClientConfig:       &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2:     true,
		ResponseHeaderTimeout: 0, // executions may take minutes; the ctx bounds them
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       90 * time.Second,
	}
	base := strings.TrimRight(baseURL, "/")
	auth := &gatewayAuth{key: apiKey, source: keySource{kind: "given"}}
	auth.base, _ = url.Parse(base) // unparsable: owns nothing, so no request carries the key
	localNS := new(atomic.Pointer[string])
	return &Remote{
		url:      base,
		http:     &http.Client{Transport: headers{next: overloadAware{next: transport}, auth: auth, localNS: localNS}},
		auth:     auth,
		cacheDir: cacheDir,
		localNS:  localNS,
		progress: newProgressRelay(),
	}
}

// SetClientNamespaces implements Gateway.
func (g *Remote) SetClientNamespaces(namespaces []string) {
	v := wire.FormatClientNamespaces(namespaces)
	g.localNS.Store(&v)
}

func (g *Remote) connect(ctx context.Context) (*mcp.ClientSession, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.session != nil {
		return g.session, nil
	}
	if err := g.unreachable(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, ConnectTimeout)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "pml-package", Version: buildinfo.Read().Version},
		&mcp.ClientOptions{ProgressNotificationHandler: g.progress.handle})
	s, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: g.url + "/mcp", HTTPClient: g.http, DisableStandaloneSSE: true}, nil)
	if err != nil {
		return nil, g.down(err)
	}
	g.session = s
	return s, nil
}

// drop forgets a broken session so the next call reconnects.
func (g *Remote) drop(s *mcp.ClientSession) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.session == s {
		g.session = nil
		_ = s.Close()
	}
}

// networkError is a failure to reach the gateway, said as `pml traces`
// says it (unreachableMessage): where it was looked for, where that
// address came from, and why. An error that already carries a wire code is
// kept (see down).
func (g *Remote) networkError(err error) error {
	if pe, ok := pmlerr.As(err); ok {
		return pe
	}
	return &pmlerr.Error{Code: pmlerr.NetworkError, Message: g.describeUnreachable(err), Err: err}
}

// describeUnreachable is unreachableMessage with what to do about a
// certificate this machine does not trust, when that is why.
func (g *Remote) describeUnreachable(err error) string {
	return g.unreachableMessage(err) + certificateHint(err)
}

// Close implements Gateway.
func (g *Remote) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.session == nil {
		return nil
	}
	err := g.session.Close()
	g.session = nil
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
