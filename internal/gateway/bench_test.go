package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/admission"
	"github.com/pml-go/pml/internal/analysis"
	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/sandbox"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/testfixture"
	"github.com/pml-go/pml/internal/tools"
	"github.com/pml-go/pml/internal/tools/std"
	"github.com/pml-go/pml/internal/upstream"
	"github.com/pml-go/pml/internal/wire"
)

// Run the figures and their baselines in one process, so the noisy
// shared machine affects them alike:
//
//	go test ./internal/gateway -run '^$' -count 5 \
//	  -bench 'ExecuteServerOnly|Baseline|Throughput64|ThousandParked'

// BenchmarkExecuteServerOnly is the whole execute of server-only code with
// three std calls, over loopback HTTP with the Go SDK client: auth, the SDK's
// stateless session, analysis, routing, the sandbox, and the trace and
// capability writes. A repeated snippet hits the analysis cache and updates
// its capability; a new one is analysed and saved as a new capability, so
// both are measured.
func BenchmarkExecuteServerOnly(b *testing.B) {
	g := gatewaytest.Start(b, gateway.Options{})
	s := g.Connect(b, g.Key, false)
	b.Run("analysis=cached", func(b *testing.B) {
		benchExecute(b, s, func(int) string { return threeStdCalls })
	})
	b.Run("analysis=fresh", func(b *testing.B) {
		benchExecute(b, s, func(i int) string { return threeStdCalls + "\n// run " + strconv.Itoa(i) })
	})
}

func benchExecute(b *testing.B, s *mcp.ClientSession, code func(i int) string) {
	ctx := context.Background()
	if err := execute(ctx, s, code(-1), threeStdCallsResult); err != nil {
		b.Fatal(err)
	}
	lat := make([]time.Duration, 0, 4096)
	cpu := cpuTime()
	for i := 0; b.Loop(); i++ {
		c := code(i)
		t0 := time.Now()
		if err := execute(ctx, s, c, threeStdCallsResult); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	reportCPU(b, cpu)
	slices.Sort(lat)
	reportLatency(b, lat)
}

// BenchmarkBaselineHTTP is a plain JSON POST round trip on loopback with
// net/http: the floor under every figure over HTTP.
func BenchmarkBaselineHTTP(b *testing.B) {
	answer := []byte(`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"{\"status\":\"success\",\"result\":42}"}]}}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(answer)
	}))
	b.Cleanup(srv.Close)
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/call",
		"params": map[string]any{"name": "execute", "arguments": map[string]any{"code": threeStdCalls}}})
	client := &http.Client{Transport: loadTransport(1)}
	lat := make([]time.Duration, 0, 4096)
	cpu := cpuTime()
	for b.Loop() {
		t0 := time.Now()
		resp, err := client.Post(srv.URL, "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		lat = append(lat, time.Since(t0))
	}
	reportCPU(b, cpu)
	slices.Sort(lat)
	reportLatency(b, lat)
}

// BenchmarkBaselineMCPCall is the call tool (math:add: no sandbox, no trace)
// over MCP Streamable HTTP with the Go SDK client: the protocol's share of
// BenchmarkExecuteServerOnly. "gateway" is the real path (auth, the SDK's
// stateless mode: a new server session per request); "stateless" and
// "stateful" serve the same MCP server without auth, to price the
// per-request session.
func BenchmarkBaselineMCPCall(b *testing.B) {
	g := gatewaytest.Start(b, gateway.Options{})
	serve := func(stateless bool) *mcp.ClientSession {
		srv := g.Service.NewMCPServer()
		h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
			&mcp.StreamableHTTPOptions{Stateless: stateless, JSONResponse: true})
		hs := httptest.NewServer(h)
		b.Cleanup(hs.Close)
		return connectVia(b, hs.URL, "", loadTransport(1))
	}
	for _, c := range []struct {
		name    string
		session func() *mcp.ClientSession
	}{
		{"gateway", func() *mcp.ClientSession { return g.Connect(b, g.Key, false) }},
		{"stateless", func() *mcp.ClientSession { return serve(true) }},
		{"stateful", func() *mcp.ClientSession { return serve(false) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			s := c.session()
			ctx := context.Background()
			params := &mcp.CallToolParams{Name: "call", Arguments: map[string]any{"tool": "math:add", "args": map[string]any{"a": 1, "b": 2}}}
			lat := make([]time.Duration, 0, 4096)
			cpu := cpuTime()
			for b.Loop() {
				t0 := time.Now()
				res, err := s.CallTool(ctx, params)
				if err != nil || res.IsError {
					b.Fatalf("call: %v %+v", err, res)
				}
				lat = append(lat, time.Since(t0))
			}
			reportCPU(b, cpu)
			slices.Sort(lat)
			reportLatency(b, lat)
		})
	}
}

// BenchmarkBaselineServiceExecute is Service.Execute in-process: everything
// of BenchmarkExecuteServerOnly but HTTP, MCP and auth. "sqlite" is the
// gateway as it runs (each run's trace written before the answer); "no-store"
// is the same service without a store, so without the trace write.
func BenchmarkBaselineServiceExecute(b *testing.B) {
	g := gatewaytest.Start(b, gateway.Options{})
	mux := stdMux()
	for _, c := range []struct {
		name string
		svc  *gateway.Service
	}{
		{"sqlite", g.Service},
		{"no-store", gateway.New(gateway.Config{Tools: mux, Rules: g.Service.Rules()})},
	} {
		b.Run(c.name, func(b *testing.B) {
			caller := gateway.Caller{Scope: store.Scope{Org: "acme", Project: "web"}}
			ctx := context.Background()
			cpu := cpuTime()
			for b.Loop() {
				a := c.svc.Execute(ctx, caller, wire.ExecuteRequest{Code: threeStdCalls})
				if a.Status != wire.StatusSuccess || string(a.Result) != threeStdCallsResult {
					b.Fatalf("%+v", a)
				}
			}
			reportCPU(b, cpu)
		})
	}
}

// BenchmarkBaselineSandboxRun is sandbox.Run alone on the analysed snippet,
// the std tools answering in-process: the execution's share.
func BenchmarkBaselineSandboxRun(b *testing.B) {
	an, err := analysis.New(1).Analyze(threeStdCalls)
	if err != nil {
		b.Fatal(err)
	}
	mux := stdMux()
	ctx := context.Background()
	cpu := cpuTime()
	for b.Loop() {
		res, err := sandbox.Run(ctx, an.JS, nil, mux.Call, sandbox.Limits{})
		if err != nil || string(res.Value) != threeStdCallsResult {
			b.Fatalf("%s %v", res.Value, err)
		}
	}
	reportCPU(b, cpu)
}

// stdMux serves the built-in std tools, as gateway.Open registers them.
func stdMux() *tools.Mux {
	mux := tools.NewMux()
	stdTools := std.New()
	for _, ns := range std.Namespaces() {
		mux.Register(ns, stdTools)
	}
	return mux
}

// BenchmarkThroughput64 is 64 Go SDK clients, each with its own session on
// one shared keep-alive transport, running the three-call snippet back to
// back. ns/op is the inverse of the throughput; execs/s states it.
func BenchmarkThroughput64(b *testing.B) {
	const clients = 64
	g := gatewaytest.Start(b, gateway.Options{})
	sessions := connectMany(b, g, g.URL+"/mcp", clients, loadTransport(clients))
	ctx := context.Background()
	runLoad(ctx, sessions, clients, clients, threeStdCalls, threeStdCallsResult).failIfErrors(b)
	resetPeakRSS()
	b.ResetTimer()
	cpu := cpuTime()
	l := runLoad(ctx, sessions, clients, b.N, threeStdCalls, threeStdCallsResult)
	b.StopTimer()
	reportCPU(b, cpu)
	l.failIfErrors(b)
	b.ReportMetric(float64(b.N)/l.wall.Seconds(), "execs/s")
	reportLatency(b, l.latency)
	reportMemory(b)
}

// Parked executions wait on a slow upstream tool: the hosted stdio fixture
// server's sleep (one child process; the SDK serves its concurrent
// tools/call requests concurrently), or the barrier upstream over HTTP.
const (
	parkMS      = 500
	sleepCode   = `return await mcp.fx.sleep({ ms: 500 })`
	sleepWant   = `"slept"`
	barrierCode = `return await mcp.park.wait({})`
	barrierWant = `"released"`
)

// parkedWave is how many executions a wave parks at once: 1,000, or 100
// under -short. The race detector makes the transpiled JS engine about 50
// times slower (140 ms an execution here), so under -race the wave is 20:
// enough to exercise the concurrent paths, and CI stays well under 30 s.
func parkedWave() int {
	switch {
	case raceEnabled:
		return 20
	case testing.Short():
		return 100
	}
	return 1000
}

type parking struct {
	n        int
	sessions []*mcp.ClientSession
	inflight *inflight
	barrier  *barrier
}

// startParking runs a gateway hosting the fixture server as "fx" (stdio) and
// a barrier for waves of n as "park" (HTTP), both started before anything is
// measured, and sessions for a wave: 20 concurrent executions per session,
// each on its own keep-alive connection.
func startParking(tb testing.TB, n int) *parking {
	tb.Helper()
	return startParkingWith(tb, n, nil)
}

// startParkingWith is startParking with the gateway's admission control
// (nil: the defaults).
func startParkingWith(tb testing.TB, n int, adm *admission.Controller) *parking {
	tb.Helper()
	// Per parked execution: a client and a server socket, and one to the
	// HTTP upstream.
	ensureFiles(tb, uint64(3*n+256))
	b, url := startBarrier(tb, n)
	g := gatewaytest.Start(tb, gateway.Options{Config: gateway.FileConfig{Servers: map[string]gateway.ServerEntry{
		"fx":   {ServerConfig: upstream.ServerConfig{Command: testfixture.BuildServer(tb)}, Hosted: true},
		"park": {ServerConfig: upstream.ServerConfig{Type: upstream.TypeHTTP, URL: url}, Hosted: true},
	}}, Admission: adm})
	endpoint, counter := serveCounted(tb, g)
	p := &parking{n: n, sessions: connectMany(tb, g, endpoint, max(1, n/20), loadTransport(n)), inflight: counter, barrier: b}
	// discover lists every provider's tools, which starts both upstreams.
	res, err := p.sessions[0].CallTool(context.Background(), &mcp.CallToolParams{Name: "discover", Arguments: map[string]any{"query": "wait sleep"}})
	if err != nil || res.IsError {
		tb.Fatalf("starting the upstream servers: %v %+v", err, res)
	}
	return p
}

// wave runs n executions of code at once.
func (p *parking) wave(ctx context.Context, code, want string) load {
	p.inflight.peak.Store(0)
	return runLoad(ctx, p.sessions, p.n, p.n, code, want)
}

// TestThousandParkedExecutions parks a wave of 1,000 executions (see
// parkedWave) on a slow upstream tool, over stdio and over HTTP. None may
// fail, the barrier proves the gateway held the whole wave at once, and the
// gateway serves a normal request afterwards. A wave takes 3 to 6 s here; the
// deadline is generous because the machine is shared, and only a wave that
// never completes (a lost or serialized call) should reach it.
func TestThousandParkedExecutions(t *testing.T) {
	p := startParking(t, parkedWave())
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	// The barrier wave runs first: its "RSS before" is then the idle gateway's.
	t.Run("http barrier", func(t *testing.T) {
		conns := p.barrier.conns.Load()
		before, _ := memory(t)
		resetPeakRSS()
		l := p.wave(ctx, barrierCode, barrierWant)
		l.failIfErrors(t)
		_, hwm := memory(t)
		t.Logf("%d executions parked at once on park:wait: wall %v, p50 %.0f ms, p99 %.0f ms, RSS %.0f MiB before, %.0f MiB with all parked (%.0f KiB each, clients included), peak %.0f MiB, %d new connections to the upstream",
			p.n, l.wall.Round(time.Millisecond), percentile(l.latency, 0.5), percentile(l.latency, 0.99),
			before, p.barrier.rss(), (p.barrier.rss()-before)*1024/float64(p.n), hwm, p.barrier.conns.Load()-conns)
	})
	t.Run("stdio sleep", func(t *testing.T) {
		resetPeakRSS()
		l := p.wave(ctx, sleepCode, sleepWant)
		l.failIfErrors(t)
		rss, hwm := memory(t)
		t.Logf("%d executions on fx:sleep(%d ms): wall %v, p50 %.0f ms, p99 %.0f ms, at most %d in flight, RSS %.0f MiB, peak %.0f MiB",
			p.n, parkMS, l.wall.Round(time.Millisecond), percentile(l.latency, 0.5), percentile(l.latency, 0.99), p.inflight.peak.Load(), rss, hwm)
	})
	if err := execute(ctx, p.sessions[0], threeStdCalls, threeStdCallsResult); err != nil {
		t.Fatalf("after the waves: %v", err)
	}
}

// BenchmarkThousandParked is TestThousandParkedExecutions as a benchmark: one
// op is a wave. Over stdio its floor is the 500 ms sleep; at the barrier the
// wave ends as soon as the last execution arrives, so ns/op is the cost of
// admitting the whole wave.
func BenchmarkThousandParked(b *testing.B) {
	p := startParking(b, parkedWave())
	for _, c := range []struct {
		name, code, want string
		dials            *atomic.Int64 // connections the gateway opens to the upstream
	}{
		{"stdio-sleep", sleepCode, sleepWant, nil},
		{"http-barrier", barrierCode, barrierWant, &p.barrier.conns},
	} {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			var dials int64
			if c.dials != nil {
				dials = c.dials.Load()
			}
			resetPeakRSS()
			var lat []time.Duration
			cpu := cpuTime()
			for b.Loop() {
				l := p.wave(ctx, c.code, c.want)
				l.failIfErrors(b)
				lat = append(lat, l.latency...)
			}
			reportCPU(b, cpu)
			slices.Sort(lat)
			reportLatency(b, lat)
			b.ReportMetric(float64(p.inflight.peak.Load()), "max-inflight")
			if c.dials != nil {
				b.ReportMetric(float64(c.dials.Load()-dials)/float64(b.N), "upstream-dials/op")
			}
			reportMemory(b)
		})
	}
}

// BenchmarkTenThousandParked parks 10,000 executions at once, one op a
// wave, and reports the peak resident memory of the process (the gateway
// with its in-process clients) and how many executions failed; none may.
// They park on the fixture server's barrier over stdio, which answers only
// once all 10,000 calls wait in it: the wave is held whole at once.
//
// Two things differ from BenchmarkThousandParked, for the open-file limit:
// over loopback TCP each parked execution holds about three descriptors,
// 30,000 here, past this machine's hard limit of 20,000, which a process
// can raise only with CAP_SYS_RESOURCE (ensureFiles). So the clients reach
// the gateway's HTTP server over in-memory connections (net.Pipe: the same
// HTTP and MCP stacks on both sides, no socket), and the upstream is the
// stdio one, whose calls share a pipe.
//
// The default admission control admits at most 2,048 executions, half of
// them per tenant, and stops admitting near the machine's memory
// (docs/limits.md "Admission and overload"), so this gateway's limits admit
// the whole wave: the benchmark measures what the wave costs, not how
// admission refuses it. It needs a few GiB of memory and a minute, so it
// does not run under -short or -race. test/scale's
// BenchmarkTenThousandParkedGateway measures a `pml gateway` process alone,
// its clients in another process.
func BenchmarkTenThousandParked(b *testing.B) {
	if testing.Short() || raceEnabled {
		b.Skip("10,000 parked executions: not under -short or -race")
	}
	const n = 10_000
	// The last call of a wave arrives tens of seconds after the first on
	// two shared cores, past the default RPC timeout of 30 s, and the
	// barrier holds the first until then.
	lim := sandbox.Limits{Timeout: sandbox.MaxTimeout, RPCTimeout: sandbox.MaxTimeout}
	adm := admission.New(admission.Limits{MaxExecutions: n + 64, MaxExecutionsPerTenant: -1, MaxQueue: n, QueueWait: time.Minute, MemoryCeiling: -1}, lim)
	g := gatewaytest.Start(b, gateway.Options{Config: gateway.FileConfig{Servers: map[string]gateway.ServerEntry{
		"fx": {ServerConfig: upstream.ServerConfig{Command: testfixture.BuildServer(b)}, Hosted: true},
	}}, Admission: adm, Limits: lim})
	ln := newPipeListener()
	counter := &inflight{}
	srv := &http.Server{Handler: counter.wrap(g.Service.Handler())}
	go func() { _ = srv.Serve(ln) }()
	b.Cleanup(func() { _ = srv.Close() })
	tr := loadTransport(n)
	tr.DialContext = ln.dial
	sessions := connectMany(b, g, "http://pipe/mcp", n/20, tr)
	code := fmt.Sprintf(`return await mcp.fx.barrier({ n: %d })`, n)
	// The first call starts the upstream server.
	if res, err := sessions[0].CallTool(context.Background(), &mcp.CallToolParams{Name: "discover", Arguments: map[string]any{"query": "barrier"}}); err != nil || res.IsError {
		b.Fatalf("starting the upstream server: %v %+v", err, res)
	}
	ctx := context.Background()
	runtime.GC()
	resetPeakRSS()
	failed := 0
	var lat []time.Duration
	cpu := cpuTime()
	for b.Loop() {
		counter.peak.Store(0)
		l := runLoad(ctx, sessions, n, n, code, barrierWant)
		failed += len(l.errs)
		if len(l.errs) > 0 {
			b.Logf("%d executions failed; first: %v", len(l.errs), l.errs[0])
		}
		lat = append(lat, l.latency...)
	}
	reportCPU(b, cpu)
	slices.Sort(lat)
	reportLatency(b, lat)
	b.ReportMetric(float64(counter.peak.Load()), "max-inflight")
	b.ReportMetric(float64(failed), "failures")
	reportMemory(b)
}
