//go:build linux

package scale_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// balancer is the load balancer in front of the replicas: round robin over
// the backends, with passive health checks like nginx's max_fails: a backend
// whose connection fails is answered with 502 and skipped for ejectFor, so a
// client that retries lands on a live replica.
type balancer struct {
	url      string // http://127.0.0.1:PORT, without /mcp
	backends []*backend
	next     atomic.Uint64

	mu  sync.Mutex
	seq []int // backend index of every POST /mcp, in order
}

// ejectFor is how long a failed backend is skipped.
const ejectFor = 2 * time.Second

type backend struct {
	name      string
	proxy     *httputil.ReverseProxy
	served    atomic.Int64 // requests sent to it
	failed    atomic.Int64 // requests that could not reach it (answered 502)
	downUntil atomic.Int64 // unix nanoseconds
}

// startBalancer serves a round-robin proxy over replicas on loopback.
func startBalancer(t testing.TB, replicas ...*replica) *balancer {
	t.Helper()
	// http.DefaultTransport keeps 2 idle connections per host: under load the
	// proxy would dial and close connections all the time.
	transport := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 2 * time.Second}).DialContext,
		MaxIdleConns:        1024,
		MaxIdleConnsPerHost: 512,
		IdleConnTimeout:     90 * time.Second,
	}
	b := &balancer{}
	for _, r := range replicas {
		u, err := url.Parse(r.url)
		if err != nil {
			t.Fatal(err)
		}
		be := &backend{name: r.name, proxy: httputil.NewSingleHostReverseProxy(u)}
		be.proxy.Transport = transport
		be.proxy.ErrorHandler = func(w http.ResponseWriter, req *http.Request, err error) {
			if req.Context().Err() != nil {
				return // the client went away; nothing to answer, the backend is fine
			}
			be.failed.Add(1)
			be.downUntil.Store(time.Now().Add(ejectFor).UnixNano())
			http.Error(w, "bad gateway: "+be.name+": "+err.Error(), http.StatusBadGateway)
		}
		b.backends = append(b.backends, be)
	}
	srv := httptest.NewServer(b)
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		transport.CloseIdleConnections()
	})
	b.url = srv.URL
	return b
}

func (b *balancer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	i := b.pick()
	be := b.backends[i]
	be.served.Add(1)
	if r.Method == http.MethodPost && r.URL.Path == "/mcp" {
		b.mu.Lock()
		b.seq = append(b.seq, i)
		b.mu.Unlock()
	}
	be.proxy.ServeHTTP(w, r)
}

// pick is round robin over the backends not ejected; when every one is
// ejected, plain round robin (a 502 beats waiting).
func (b *balancer) pick() int {
	n := uint64(len(b.backends))
	now := time.Now().UnixNano()
	for range n {
		i := int(b.next.Add(1) % n)
		if b.backends[i].downUntil.Load() <= now {
			return i
		}
	}
	return int(b.next.Add(1) % n)
}

// sequence returns the backend index of every POST /mcp so far.
func (b *balancer) sequence() []int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]int(nil), b.seq...)
}
