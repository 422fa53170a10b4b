// Package upstream is the client side of the MCP servers PML uses: it starts
// stdio servers as child processes (lazily, restarting them after a crash and
// stopping them when idle) and connects to Streamable HTTP servers. Each
// server is a tools.Provider for the namespace of its name.
package upstream

import (
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/tools"
)

// Options configures a Pool. The zero value is usable.
type Options struct {
	IdleTimeout  time.Duration                     // stop a server unused this long; default 5 min; <0 never
	StartTimeout time.Duration                     // initialize handshake bound; default 30 s
	StopGrace    time.Duration                     // wait after closing stdin, and again after SIGTERM; default 2 s
	Logger       *slog.Logger                      // server stderr lines logged at Debug with attr server=name
	OnStart      func(server string, restart bool) // hook for metrics; called after each successful start
	// OnTools, when set, is handed each tool list a server returns (not the
	// cached one again), on the caller's goroutine: the package keeps it for
	// the catalog of a later process (docs/protocol.md "HTTP endpoints").
	OnTools func(server string, list []tools.Info)
	// MinimalEnv starts stdio servers with only procenv's minimal base plus
	// their configured env, instead of this process's whole environment. The
	// package sets it (its environment holds the gateway key); the gateway's
	// hosted servers are the operator's own and inherit.
	MinimalEnv bool
}

const (
	defaultIdleTimeout  = 5 * time.Minute
	defaultStartTimeout = 30 * time.Second
	defaultStopGrace    = 2 * time.Second
)

// Pool owns a set of servers by name.
type Pool struct {
	opts      Options
	client    *mcp.Client
	transport *http.Transport // shared by the pool's HTTP servers

	// running counts start attempts and session watchers, so Close can wait
	// until every child is reaped.
	running sync.WaitGroup

	mu      sync.Mutex
	servers map[string]*Server
	closed  bool
}

// NewPool returns an empty pool.
func NewPool(opts Options) *Pool {
	if opts.IdleTimeout == 0 {
		opts.IdleTimeout = defaultIdleTimeout
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = defaultStartTimeout
	}
	if opts.StopGrace <= 0 {
		opts.StopGrace = defaultStopGrace
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "pml", Version: "1.0.0"}, &mcp.ClientOptions{
		// We serve no roots, sampling or elicitation to upstream servers.
		Capabilities: &mcp.ClientCapabilities{},
	})
	return &Pool{opts: opts, client: client, transport: newTransport(), servers: map[string]*Server{}}
}

// Add registers cfg under cfg.Name, replacing (and stopping) a previous
// server of that name. Nothing starts until the server is first used.
func (p *Pool) Add(cfg ServerConfig) *Server {
	s := &Server{name: cfg.Name, cfg: cfg, pool: p, validator: tools.NewValidator()}
	p.mu.Lock()
	old := p.servers[cfg.Name]
	if p.closed {
		s.closed = true
	} else {
		p.servers[cfg.Name] = s
	}
	p.mu.Unlock()
	if old != nil {
		old.shutdown()
	}
	return s
}

// Remove stops the server registered under name, if any, and forgets it.
// Calls through a *Server kept from before fail with TOOL_ERROR.
func (p *Pool) Remove(name string) {
	p.mu.Lock()
	s := p.servers[name]
	delete(p.servers, name)
	p.mu.Unlock()
	if s != nil {
		s.shutdown()
	}
}

// Server returns the server registered under name.
func (p *Pool) Server(name string) (*Server, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s, ok := p.servers[name]
	return s, ok
}

// Close stops every server and returns once all their processes are reaped.
// Calls in flight fail with TOOL_ERROR; later calls fail too.
func (p *Pool) Close() error {
	p.mu.Lock()
	p.closed = true
	servers := p.servers
	p.servers = map[string]*Server{}
	p.mu.Unlock()
	for _, s := range servers {
		s.shutdown()
	}
	p.running.Wait()
	p.transport.CloseIdleConnections()
	return nil
}
