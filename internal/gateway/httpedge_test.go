package gateway_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/httpserve"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/wire"
)

// stalledConns is how many attacking connections the edge tests open.
const stalledConns = 300

// Connections without a key that announce a 1 MiB body, send all of it but
// one byte and stall are answered 401 from their headers and closed: no body
// is read, so nothing piles up, and an authorized client is served meanwhile.
func TestUnauthenticatedBodiesAreNeverRead(t *testing.T) {
	ensureFiles(t, 4*stalledConns)
	g := gatewaytest.Start(t, gateway.Options{})
	heap := watchHeap()
	errs := make(chan error, stalledConns)
	for range stalledConns {
		c := dialRaw(t, g, postHead("/mcp", wire.MaxRequestBytes))
		sendBody(c, wire.MaxRequestBytes-1)
		go func() {
			resp, body, err := readAnswer(c, 60*time.Second)
			switch {
			case err != nil:
				errs <- err
			case resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") != `Bearer realm="pml"` || !resp.Close:
				errs <- fmt.Errorf("HTTP %d %v %s", resp.StatusCode, resp.Header, body)
			default:
				errs <- nil
			}
		}()
	}
	promptlyAlive(t, g, g.Key)
	for range stalledConns {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	// Bodies held whole would be 300 MiB.
	heap.atMost(t, 48, "300 unauthenticated uploads")
	promptlyAlive(t, g, g.Key)
}

// Connections with a key that stall one byte short of their body hold at
// most their tenant's share of the body budget, each until its body timeout
// (408), or wait for room until then (503); the heap stays bounded, every
// connection is closed, and another tenant is served promptly throughout.
func TestStalledBodiesWithAKeyAreBounded(t *testing.T) {
	ensureFiles(t, 4*stalledConns)
	g := gatewaytest.StartLimited(t, gateway.Options{}, httpserve.Limits{BodyTimeout: time.Second, MaxBufferedBytes: 8 << 20})
	other := g.NewKey(t, store.Scope{Org: "globex", Project: "web"})
	heap := watchHeap()
	type result struct {
		code string
		err  error
	}
	results := make(chan result, stalledConns)
	for range stalledConns {
		c := dialRaw(t, g, postHead("/mcp", wire.MaxRequestBytes, "Authorization: Bearer "+g.Key))
		sendBody(c, wire.MaxRequestBytes-1)
		go func() {
			resp, body, err := readAnswer(c, 60*time.Second)
			if err != nil {
				results <- result{err: err}
				return
			}
			var e struct{ Error string }
			_ = json.Unmarshal(body, &e)
			switch {
			case resp.StatusCode == http.StatusRequestTimeout && e.Error == "request_timeout",
				resp.StatusCode == http.StatusServiceUnavailable && e.Error == "server_busy" && resp.Header.Get("Retry-After") == "1":
				results <- result{code: e.Error}
			default:
				results <- result{err: fmt.Errorf("HTTP %d %s", resp.StatusCode, body)}
			}
		}()
	}
	promptlyAlive(t, g, other)
	count := map[string]int{}
	for range stalledConns {
		r := <-results
		if r.err != nil {
			t.Fatal(r.err)
		}
		count[r.code]++
	}
	if count["request_timeout"] == 0 || count["server_busy"] == 0 {
		t.Errorf("answers %v: want both bodies that timed out and requests that found no room", count)
	}
	heap.atMost(t, 48, "300 stalled uploads with a key")
	promptlyAlive(t, g, g.Key)
}

// Past the bound on connections without a valid key, the oldest are closed
// at once; a new client presenting its key is served.
func TestUnauthenticatedConnectionsAreBounded(t *testing.T) {
	const bound = 64
	ensureFiles(t, 4*stalledConns)
	// A long header timeout: here only the bound closes connections.
	g := gatewaytest.StartLimited(t, gateway.Options{}, httpserve.Limits{ReadHeaderTimeout: time.Minute, MaxUnauthConns: bound})
	heap := watchHeap()
	conns := make([]net.Conn, stalledConns)
	for i := range conns {
		conns[i] = dialRaw(t, g, "GET /healthz HTTP/1.1\r\nHost: pml.invalid\r\n")
	}
	for i, c := range conns[:stalledConns-bound] {
		if !closedWithin(c, 20*time.Second) {
			t.Fatalf("connection %d of %d, past the bound of %d, is still open", i, stalledConns, bound)
		}
	}
	for i, c := range conns[stalledConns-bound:] {
		if closedWithin(c, 10*time.Millisecond) {
			t.Fatalf("connection %d, among the %d newest, was closed", stalledConns-bound+i, bound)
		}
	}
	promptlyAlive(t, g, g.Key)
	heap.atMost(t, 32, "300 stalled connections")
	// A connection that presented its key no longer counts: bound more new
	// connections close all the old stalled ones, not the authorized one.
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	s := connectVia(t, g.URL+"/mcp", g.Key, tr)
	for range bound {
		dialRaw(t, g, "GET /healthz HTTP/1.1\r\nHost: pml.invalid\r\n")
	}
	for _, c := range conns[stalledConns-bound:] {
		if !closedWithin(c, 20*time.Second) {
			t.Fatal("an old stalled connection survived the bound")
		}
	}
	alive(t, s) // over its existing connection, if still pooled
}

// Headers that never end, a body that never ends and an idle keep-alive
// connection are each closed after their timeout; the gateway goes on
// serving.
func TestHTTPTimeouts(t *testing.T) {
	g := gatewaytest.StartLimited(t, gateway.Options{}, httpserve.Limits{
		ReadHeaderTimeout: 500 * time.Millisecond, BodyTimeout: 500 * time.Millisecond, IdleTimeout: time.Second})

	if c := dialRaw(t, g, "GET /healthz HTTP/1.1\r\nHost: pml.invalid\r\n"); !closedWithin(c, 20*time.Second) {
		t.Fatal("unfinished headers: the connection stays open")
	}

	c := dialRaw(t, g, postHead("/api/traces", 100, "Authorization: Bearer "+g.Key)+`{"traces":`)
	resp, body, err := readAnswer(c, 20*time.Second)
	if err != nil {
		t.Fatalf("unfinished body: %v", err)
	}
	if resp.StatusCode != http.StatusRequestTimeout || !resp.Close || errorField(t, body) != "request_timeout" {
		t.Fatalf("unfinished body: HTTP %d close=%v %s", resp.StatusCode, resp.Close, body)
	}

	c = dialRaw(t, g, "GET /healthz HTTP/1.1\r\nHost: pml.invalid\r\n\r\n")
	if _, err := http.ReadResponse(bufio.NewReader(c), nil); err != nil {
		t.Fatal(err)
	}
	if !closedWithin(c, 20*time.Second) {
		t.Fatal("idle keep-alive connection stays open")
	}
	promptlyAlive(t, g, g.Key)
}

// A body sent to a route that reads none (no key needed) is not drained:
// the answer comes at once and closes the connection.
func TestUnreadBodyIsNotDrained(t *testing.T) {
	g := gatewaytest.Start(t, gateway.Options{}) // a 30 s body timeout
	c := dialRaw(t, g, "GET /healthz HTTP/1.1\r\nHost: pml.invalid\r\nContent-Length: 200000\r\n\r\n")
	resp, body, err := readAnswer(c, 10*time.Second)
	if err != nil || resp.StatusCode != http.StatusOK || !resp.Close {
		t.Fatalf("health check with an unsent body: %v %v %s", err, resp, body)
	}
	promptlyAlive(t, g, g.Key)
}

// The 401 names plain Bearer keys, so MCP clients do not start OAuth
// discovery, and closes the connection.
func TestUnauthorizedChallenge(t *testing.T) {
	g := gatewaytest.Start(t, gateway.Options{})
	for key, want := range map[string]string{
		"":          `Bearer realm="pml"`,
		"pml_wrong": `Bearer realm="pml", error="invalid_token"`,
	} {
		for _, path := range []string{"/mcp", "/api/traces", "/mcp/pml.std.json.parse"} {
			req, _ := http.NewRequest(http.MethodGet, g.URL+path, nil)
			if key != "" {
				req.Header.Set("Authorization", "Bearer "+key)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") != want ||
				!resp.Close || errorField(t, body) != "unauthorized" {
				t.Errorf("GET %s with key %q: HTTP %d close=%v %v %s", path, key, resp.StatusCode, resp.Close, resp.Header, body)
			}
		}
	}
	// A chunked upload without a key gets the same answer, unread.
	c := dialRaw(t, g, "POST /mcp HTTP/1.1\r\nHost: pml.invalid\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n")
	if resp, _, err := readAnswer(c, 10*time.Second); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("chunked upload without a key: %v %v", resp, err)
	}
	promptlyAlive(t, g, g.Key)
}

// Bodies over 1 MiB are refused whether their length is announced or not.
func TestOversizedBodies(t *testing.T) {
	g := gatewaytest.Start(t, gateway.Options{})
	auth := "Authorization: Bearer " + g.Key
	c := dialRaw(t, g, postHead("/api/traces", wire.MaxRequestBytes+1, auth))
	resp, body, err := readAnswer(c, 10*time.Second)
	if err != nil || resp.StatusCode != http.StatusRequestEntityTooLarge || errorField(t, body) != "request_too_large" {
		t.Fatalf("announced oversize: %v %v %s", err, resp, body)
	}
	// Chunked: 0x100001 bytes in one chunk.
	c = dialRaw(t, g, "POST /api/traces HTTP/1.1\r\nHost: pml.invalid\r\n"+auth+"\r\nTransfer-Encoding: chunked\r\n\r\n100001\r\n")
	sendBody(c, wire.MaxRequestBytes+1)
	resp, body, err = readAnswer(c, 10*time.Second)
	if err != nil || resp.StatusCode != http.StatusRequestEntityTooLarge || errorField(t, body) != "request_too_large" {
		t.Fatalf("chunked oversize: %v %v %s", err, resp, body)
	}
	promptlyAlive(t, g, g.Key)
}

func errorField(t *testing.T, body []byte) string {
	t.Helper()
	var e struct{ Error string }
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("error body %q: %v", body, err)
	}
	return e.Error
}
