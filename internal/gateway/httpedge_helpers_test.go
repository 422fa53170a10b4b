package gateway_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/gateway/gatewaytest"
)

// dialRaw opens a TCP connection to the gateway and writes head as is.
func dialRaw(t *testing.T, g *gatewaytest.Gateway, head string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(g.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if _, err := io.WriteString(c, head); err != nil {
		t.Fatal(err)
	}
	return c
}

// closedWithin reports whether the server closes c (a read ends in EOF or
// a reset) within d; false means c is still open after d.
func closedWithin(c net.Conn, d time.Duration) bool {
	_ = c.SetReadDeadline(time.Now().Add(d))
	buf := make([]byte, 4096)
	for {
		if _, err := c.Read(buf); err != nil {
			var ne net.Error
			return !errors.As(err, &ne) || !ne.Timeout()
		}
	}
}

// postHead is the head of a POST with a Content-Length, with extra header
// lines.
func postHead(path string, contentLength int, headers ...string) string {
	var b strings.Builder
	b.WriteString("POST " + path + " HTTP/1.1\r\nHost: pml.invalid\r\nContent-Type: application/json\r\n")
	b.WriteString("Accept: application/json, text/event-stream\r\n")
	b.WriteString("Content-Length: " + strconv.Itoa(contentLength) + "\r\n")
	for _, h := range headers {
		b.WriteString(h + "\r\n")
	}
	b.WriteString("\r\n")
	return b.String()
}

// bodyChunk is what sendBody writes, shared by every writer (it is only
// read), so the test's own buffers do not count in the heap it measures.
var bodyChunk = make([]byte, 64<<10)

// sendBody writes n bytes to c in the background, stopping at the first
// error (the server closing the connection).
func sendBody(c net.Conn, n int) {
	go func() {
		chunk := bodyChunk
		for n > 0 {
			k := min(n, len(chunk))
			if _, err := c.Write(chunk[:k]); err != nil {
				return
			}
			n -= k
		}
	}()
}

// answer reads one response from c, then checks the server closes c.
func readAnswer(c net.Conn, within time.Duration) (*http.Response, []byte, error) {
	_ = c.SetReadDeadline(time.Now().Add(within))
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("no answer: %w", err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp, nil, fmt.Errorf("answer body: %w", err)
	}
	if _, err := br.ReadByte(); err == nil {
		return resp, body, errors.New("more bytes after the answer")
	} else if ne := net.Error(nil); errors.As(err, &ne) && ne.Timeout() {
		return resp, body, errors.New("the connection stayed open after the answer")
	}
	return resp, body, nil
}

// heapWatch samples the live heap (what a collection leaves) until
// stopped: garbage not yet collected pins nothing.
type heapWatch struct {
	base uint64
	peak atomic.Uint64
	stop chan struct{}
	wg   sync.WaitGroup
}

func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

func watchHeap() *heapWatch {
	h := &heapWatch{base: liveHeap(), stop: make(chan struct{})}
	h.peak.Store(h.base)
	h.wg.Go(func() {
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-h.stop:
				return
			case <-tick.C:
			}
			if live := liveHeap(); live > h.peak.Load() {
				h.peak.Store(live)
			}
		}
	})
	return h
}

// growthMiB stops the watch and returns the peak growth of the live heap.
func (h *heapWatch) growthMiB() float64 {
	close(h.stop)
	h.wg.Wait()
	return float64(h.peak.Load()-h.base) / (1 << 20)
}

// atMost stops the watch and fails t when the live heap grew by more than
// maxMiB during what.
func (h *heapWatch) atMost(t *testing.T, maxMiB float64, what string) {
	t.Helper()
	growth := h.growthMiB()
	t.Logf("live heap grew %.1f MiB under %s", growth, what)
	if growth > maxMiB {
		t.Errorf("live heap grew %.0f MiB under %s, over %.0f MiB", growth, what, maxMiB)
	}
}

// promptlyAlive checks a new session of key is served within a generous
// bound while the gateway is under attack.
func promptlyAlive(t *testing.T, g *gatewaytest.Gateway, key string) {
	t.Helper()
	start := time.Now()
	alive(t, freshSession(t, g, key))
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("an authorized request took %v", d)
	}
}

// freshSession connects over a transport of its own, so its requests open
// new connections rather than reuse one.
func freshSession(t *testing.T, g *gatewaytest.Gateway, key string) *mcp.ClientSession {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return connectVia(t, g.URL+"/mcp", key, tr)
}
