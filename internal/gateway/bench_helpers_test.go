package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/wire"
)

// threeStdCalls is the server-only snippet of the benchmarks.
const threeStdCalls = `const parsed = await mcp.json.parse({ data: '{"n": 20}' });
const sum = await mcp.math.add({ a: parsed.n, b: 22 });
const h = await mcp.crypto.sha256({ data: "x" });
return { sum, h };`

const threeStdCallsResult = `{"sum":42,"h":"2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881"}`

// loadTransport is the client side of a load test: one keep-alive pool shared
// by every session, sized so that no request waits for a connection or
// reconnects. (http.DefaultTransport keeps 2 idle connections per host: with
// 64 clients the other 62 would dial and close a TCP connection per request.)
func loadTransport(conns int) *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = conns
	tr.MaxIdleConnsPerHost = conns
	return tr
}

type bearer struct {
	key  string
	next http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	if b.key == "" {
		return b.next.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return b.next.RoundTrip(r)
}

// connectVia opens a Go SDK client session to endpoint (a gateway's /mcp)
// over tr, as gatewaytest.Connect does over http.DefaultTransport.
func connectVia(tb testing.TB, endpoint, key string, tr http.RoundTripper) *mcp.ClientSession {
	tb.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil)
	s, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint:             endpoint,
		HTTPClient:           &http.Client{Transport: bearer{key: key, next: tr}},
		DisableStandaloneSSE: true, // the gateway is stateless: no server-initiated stream
	}, nil)
	if err != nil {
		tb.Fatalf("connect: %v", err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	return s
}

// connectMany opens n sessions sharing one transport.
func connectMany(tb testing.TB, g *gatewaytest.Gateway, endpoint string, n int, tr http.RoundTripper) []*mcp.ClientSession {
	tb.Helper()
	out := make([]*mcp.ClientSession, n)
	for i := range out {
		out[i] = connectVia(tb, endpoint, g.Key, tr)
	}
	return out
}

// execute runs code and checks the answer is success with result want (any
// result when want is empty). Safe on any goroutine: it returns an error
// rather than failing the test.
func execute(ctx context.Context, s *mcp.ClientSession, code, want string) error {
	a, err := answer(ctx, s, code)
	if err != nil {
		return err
	}
	if a.Status != wire.StatusSuccess {
		return fmt.Errorf("execute: %s %s: %s", a.Status, a.ErrorCode, a.Error)
	}
	if want != "" && string(a.Result) != want {
		return fmt.Errorf("execute: result %s, want %s", a.Result, want)
	}
	return nil
}

// answer runs code and decodes the answer, whatever its status, checking
// that isError agrees with it. Safe on any goroutine.
func answer(ctx context.Context, s *mcp.ClientSession, code string) (wire.Answer, error) {
	var a wire.Answer
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "execute", Arguments: wire.ExecuteRequest{Code: code}})
	if err != nil {
		return a, fmt.Errorf("execute: %w", err)
	}
	if len(res.Content) != 1 {
		return a, fmt.Errorf("execute: %d content items", len(res.Content))
	}
	text, _ := res.Content[0].(*mcp.TextContent)
	if text == nil {
		return a, errors.New("execute: content is not text")
	}
	if err := json.Unmarshal([]byte(text.Text), &a); err != nil {
		return a, fmt.Errorf("execute: answer is not JSON: %w", err)
	}
	if res.IsError != (a.Status == wire.StatusError) {
		return a, fmt.Errorf("execute: isError %v with status %s", res.IsError, a.Status)
	}
	return a, nil
}

// load is the outcome of many concurrent executions.
type load struct {
	wall    time.Duration
	latency []time.Duration // sorted
	errs    []error
}

// runLoad runs total executions of code on workers goroutines, worker i
// using sessions[i%len(sessions)], and records each one's latency.
func runLoad(ctx context.Context, sessions []*mcp.ClientSession, workers, total int, code, want string) load {
	var (
		mu   sync.Mutex
		out  load
		wg   sync.WaitGroup
		next = make(chan struct{}, total)
	)
	for range total {
		next <- struct{}{}
	}
	close(next)
	start := time.Now()
	for i := range workers {
		s := sessions[i%len(sessions)]
		wg.Go(func() {
			var lat []time.Duration
			var errs []error
			for range next {
				t0 := time.Now()
				if err := execute(ctx, s, code, want); err != nil {
					errs = append(errs, err)
					continue
				}
				lat = append(lat, time.Since(t0))
			}
			mu.Lock()
			out.latency = append(out.latency, lat...)
			out.errs = append(out.errs, errs...)
			mu.Unlock()
		})
	}
	wg.Wait()
	out.wall = time.Since(start)
	slices.Sort(out.latency)
	return out
}

// failIfErrors reports the first few errors of a load.
func (l load) failIfErrors(tb testing.TB) {
	tb.Helper()
	if len(l.errs) == 0 {
		return
	}
	tb.Fatalf("%d executions failed; first: %v", len(l.errs), errors.Join(l.errs[:min(3, len(l.errs))]...))
}

// percentile of sorted durations, in milliseconds (nearest rank).
func percentile(sorted []time.Duration, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p+0.999999) - 1
	return float64(sorted[min(max(i, 0), len(sorted)-1)].Microseconds()) / 1000
}

func reportLatency(b *testing.B, sorted []time.Duration) {
	b.ReportMetric(percentile(sorted, 0.50), "p50-ms")
	b.ReportMetric(percentile(sorted, 0.99), "p99-ms")
}

// reportCPU reports the CPU used since start per op, gateway and in-process
// clients together: two idle cores give 2,000 / cpu-ms/op operations a second.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime()-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

// readMemory reads this process's resident set and its peak from
// /proc/self/status, in MiB. The gateway and its Go SDK clients share the
// process, so the figures cover both (the hosted fixture server is a child
// process and is not included).
func readMemory() (rss, hwm float64, err error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, 0, fmt.Errorf("memory figures: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), ":")
		if !ok || (name != "VmRSS" && name != "VmHWM") {
			continue
		}
		kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 64)
		if err != nil {
			return 0, 0, fmt.Errorf("memory figures: %q: %w", sc.Text(), err)
		}
		if name == "VmRSS" {
			rss = kb / 1024
		} else {
			hwm = kb / 1024
		}
	}
	return rss, hwm, sc.Err()
}

func memory(tb testing.TB) (rss, hwm float64) {
	tb.Helper()
	rss, hwm, err := readMemory()
	if err != nil {
		tb.Skip(err)
	}
	return rss, hwm
}

// resetPeakRSS starts VmHWM over from the current RSS (Linux clear_refs
// "5"), so the peak reported belongs to the phase measured, not to earlier
// benchmarks in the same process. Where that is refused, VmHWM stays the
// process's lifetime peak.
func resetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

func reportMemory(b *testing.B) {
	rss, hwm := memory(b)
	b.ReportMetric(rss, "rss-MiB")
	b.ReportMetric(hwm, "peak-rss-MiB")
}

// inflight counts the requests inside a handler and keeps the peak.
type inflight struct{ now, peak atomic.Int64 }

func (f *inflight) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := f.now.Add(1)
		defer f.now.Add(-1)
		for p := f.peak.Load(); n > p && !f.peak.CompareAndSwap(p, n); p = f.peak.Load() {
		}
		h.ServeHTTP(w, r)
	})
}

// serveCounted serves g's HTTP surface on a second loopback port behind an
// in-flight counter, and returns that port's /mcp endpoint. It observes the
// gateway from the server side: how many executions it holds at once.
func serveCounted(tb testing.TB, g *gatewaytest.Gateway) (string, *inflight) {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	f := &inflight{}
	// No ReadHeaderTimeout: with a wave of executions on two shared cores, a
	// connection's goroutine can wait in the run queue longer than the
	// timeout between arming it and reading the headers already received;
	// the server then closes the connection and the wave fails with resets.
	// These servers are in-process on loopback, where slow clients are no
	// threat.
	srv := &http.Server{Handler: f.wrap(g.Service.Handler())}
	go func() { _ = srv.Serve(ln) }()
	tb.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String() + "/mcp", f
}

// pipeListener serves HTTP over in-memory connections (net.Pipe): the HTTP
// and MCP stacks of both sides run as over TCP, without a file descriptor
// per connection.
type pipeListener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), closed: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

// dial is a client transport's DialContext.
func (l *pipeListener) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.closed:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }
