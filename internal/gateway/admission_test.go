package gateway_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/admission"
	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/sandbox"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/testfixture"
	"github.com/pml-go/pml/internal/upstream"
	"github.com/pml-go/pml/internal/wire"
)

const (
	holdCode = `return await mcp.gate.hold({})`
	holdWant = `"released"`
)

// startAdmitting runs a gateway with admission limits lim (no memory
// ceiling unless set) hosting a gate (see testfixture.StartGate) as "gate".
func startAdmitting(t *testing.T, lim admission.Limits) (*gatewaytest.Gateway, *testfixture.Gate) {
	t.Helper()
	if lim.MemoryCeiling == 0 {
		lim.MemoryCeiling = -1
	}
	gate := testfixture.StartGate(t)
	g := gatewaytest.Start(t, gateway.Options{
		Config: gateway.FileConfig{Servers: map[string]gateway.ServerEntry{
			"gate": {ServerConfig: upstream.ServerConfig{Type: upstream.TypeHTTP, URL: gate.URL}, Hosted: true},
		}},
		Admission: admission.New(lim, sandbox.Limits{}),
	})
	return g, gate
}

// holdAsync starts an execution parked at the gate; its answer comes on the
// channel.
func holdAsync(s *mcp.ClientSession) <-chan wire.Answer {
	out := make(chan wire.Answer, 1)
	go func() {
		a, err := answer(context.Background(), s, holdCode)
		if err != nil {
			a = wire.ErrorAnswer(pmlerr.New(pmlerr.Internal, "%v", err), "")
		}
		out <- a
	}()
	return out
}

// wantOverloaded checks an OVERLOADED answer carries retry_after_ms and
// names the limit.
func wantOverloaded(t *testing.T, a wire.Answer, retryMS int64, limit string) {
	t.Helper()
	wantError(t, a, pmlerr.Overloaded)
	if ms, _ := a.Details["retry_after_ms"].(float64); int64(ms) != retryMS {
		t.Fatalf("retry_after_ms %v, want %d", a.Details["retry_after_ms"], retryMS)
	}
	if a.Details["limit"] != limit {
		t.Fatalf("limit %v, want %s", a.Details["limit"], limit)
	}
}

func wantSuccess(t *testing.T, a wire.Answer, result string) {
	t.Helper()
	if a.Status != wire.StatusSuccess || string(a.Result) != result {
		t.Fatalf("want success %s, got %s %s: %s %s", result, a.Status, a.ErrorCode, a.Error, a.Result)
	}
}

// executeOne is a raw tools/call of execute, as any HTTP client would send it.
const executeOne = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"execute","arguments":{"code":"return 1"}}}`

// metricsText reads the operator's metrics listener.
func metricsText(t *testing.T, g *gatewaytest.Gateway) string {
	t.Helper()
	resp, err := http.Get(g.MetricsURL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func wantMetric(t *testing.T, text, line string) {
	t.Helper()
	for _, l := range strings.Split(text, "\n") {
		if l == line {
			return
		}
	}
	t.Fatalf("metrics lack %q", line)
}

// With every execution place taken, a request waits in the queue and is
// refused with OVERLOADED after QueueWait; with the queue full too, the
// HTTP request itself is refused with 429 and Retry-After before it is
// parsed. Once a place frees, the next request runs.
func TestOverloadedThenServedAgain(t *testing.T) {
	g, gate := startAdmitting(t, admission.Limits{MaxExecutions: 2, MaxExecutionsPerTenant: 2, MaxQueue: 1, QueueWait: 4 * time.Second})
	s := g.Connect(t, g.Key, false)
	ctrl := g.Service.Admission()

	parked := []<-chan wire.Answer{holdAsync(s), holdAsync(s)}
	testfixture.WaitFor(t, "two executions at the gate", func() bool { return gate.Waiting() == 2 })
	queued := holdAsync(s)
	testfixture.WaitFor(t, "one request queued", func() bool { return ctrl.Stats().Queued == 1 })
	metrics := metricsText(t, g)
	wantMetric(t, metrics, "pml_executions_admitted 2")
	wantMetric(t, metrics, "pml_executions_queued 1")
	wantMetric(t, metrics, "pml_executions_running 0") // both wait on the tool

	// Places and queue full: 429 at the HTTP level, for raw HTTP clients,
	resp, raw := g.PostMCP(t, g.Key, executeOne)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "4" {
		t.Fatalf("status %d, Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	var body struct {
		Error        string `json:"error"`
		RetryAfterMS int64  `json:"retry_after_ms"`
	}
	if err := json.Unmarshal(raw, &body); err != nil || body.Error != "overloaded" || body.RetryAfterMS != 4000 {
		t.Fatalf("429 body %+v (%v)", body, err)
	}
	// A request without a valid key is still 401: load is shown only to
	// callers with a key.
	if resp, _ := g.PostMCP(t, "pml_not_a_key", executeOne); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("bad key while saturated: status %d", resp.StatusCode)
	}
	// ...and for the Go SDK client, whose session survives it.
	if _, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "execute", Arguments: wire.ExecuteRequest{Code: "return 1"}}); err == nil || !strings.Contains(err.Error(), "Too Many Requests") {
		t.Fatalf("SDK client over the limit: %v", err)
	}

	// The queued request gets no place within QueueWait.
	wantOverloaded(t, <-queued, 4000, "executions")
	metrics = metricsText(t, g)
	wantMetric(t, metrics, `pml_executions_rejected_total{reason="queue_full"} 2`)
	wantMetric(t, metrics, `pml_executions_rejected_total{reason="wait"} 1`)

	// Capacity frees: the parked ones finish and the next request runs.
	gate.Open()
	for _, c := range parked {
		wantSuccess(t, <-c, holdWant)
	}
	alive(t, s)
	wantSuccess(t, <-holdAsync(s), holdWant)
	if st := ctrl.Stats(); st.Admitted != 0 || st.Running != 0 || st.Queued != 0 {
		t.Fatalf("places left taken: %+v", st)
	}
}

// A request that finds no place but room in the queue is not shed at the
// HTTP level: it waits, and runs as soon as a place frees.
func TestQueuedRequestRunsWhenAPlaceFrees(t *testing.T) {
	g, gate := startAdmitting(t, admission.Limits{MaxExecutions: 1, MaxExecutionsPerTenant: 1, MaxQueue: 4, QueueWait: time.Minute})
	s := g.Connect(t, g.Key, false)
	first := holdAsync(s)
	testfixture.WaitFor(t, "the first at the gate", func() bool { return gate.Waiting() == 1 })
	second := make(chan wire.Answer, 1)
	go func() {
		a, err := answer(context.Background(), s, "return 7")
		if err != nil {
			t.Error(err)
		}
		second <- a
	}()
	testfixture.WaitFor(t, "the second queued", func() bool { return g.Service.Admission().Stats().Queued == 1 })
	gate.Open()
	wantSuccess(t, <-first, holdWant)
	wantSuccess(t, <-second, "7")
}

// A tenant using all its places gets OVERLOADED; another tenant is served
// meanwhile, and the first is served again once its places free.
func TestTenantAtItsCapDoesNotBlockAnother(t *testing.T) {
	g, gate := startAdmitting(t, admission.Limits{MaxExecutions: 4, MaxExecutionsPerTenant: 2, MaxQueue: 4, QueueWait: 300 * time.Millisecond})
	a := g.Connect(t, g.Key, false)
	b := g.Connect(t, g.NewKey(t, store.Scope{Org: "other", Project: "p"}), false)

	parked := []<-chan wire.Answer{holdAsync(a), holdAsync(a)}
	testfixture.WaitFor(t, "a's two executions at the gate", func() bool { return gate.Waiting() == 2 })
	over, err := answer(context.Background(), a, "return 1")
	if err != nil {
		t.Fatal(err)
	}
	wantOverloaded(t, over, 300, "executions_per_tenant")

	// b runs code, and parks executions of its own, while a is at its cap.
	alive(t, b)
	bParked := holdAsync(b)
	testfixture.WaitFor(t, "b at the gate too", func() bool { return gate.Waiting() == 3 })

	gate.Open()
	for _, c := range append(parked, bParked) {
		wantSuccess(t, <-c, holdWant)
	}
	alive(t, a)
}

// A direct call of a capability runs code on the gateway: it is admitted
// like an execution of the caller's tenant.
func TestDirectCapabilityCallIsAdmitted(t *testing.T) {
	g, gate := startAdmitting(t, admission.Limits{MaxExecutions: 2, MaxExecutionsPerTenant: 1, MaxQueue: -1})
	s := g.Connect(t, g.Key, true)
	learned := gatewaytest.Execute(t, s, wire.ExecuteRequest{Code: "const r = await mcp.math.add({a: args.a ?? 1, b: 1}); return r", Intent: "add one"})
	wantSuccess(t, learned, "2")
	if learned.Capability == nil {
		t.Fatal("no capability learned")
	}
	capID := learned.Capability.Name

	parked := holdAsync(s)
	testfixture.WaitFor(t, "the tenant's one place taken", func() bool { return gate.Waiting() == 1 })
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "call", Arguments: wire.CallRequest{Tool: capID, Args: json.RawMessage(`{"a": 2}`)}})
	if err != nil {
		t.Fatal(err)
	}
	wantOverloaded(t, gatewaytest.DecodeAnswer(t, res), 2000, "executions_per_tenant")
	gate.Open()
	wantSuccess(t, <-parked, holdWant)
	res, err = s.CallTool(context.Background(), &mcp.CallToolParams{Name: "call", Arguments: wire.CallRequest{Tool: capID, Args: json.RawMessage(`{"a": 2}`)}})
	if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != "3" {
		t.Fatalf("capability call after the place freed: %v %+v", err, res)
	}
}

// Load: 50 executions (16 under -race) filling their sandbox heap at once,
// with normal executions of another tenant interleaved, against a gateway
// with the default admission. Every request gets an answer (MEMORY_LIMIT, or
// OVERLOADED had it been refused), the normal ones keep succeeding, and the
// process stays under 2 GB: only running executions fill a heap, and at
// most MaxRunning (the fillers' tenant: its share) run at a time.
func TestHeapFillersUnderLoad(t *testing.T) {
	fillers := 50
	opts := gateway.Options{}
	if raceEnabled {
		// The engine runs tens of times slower under the race detector:
		// fewer, smaller heaps keep the run short (and RSS is not measured).
		fillers = 16
		opts.Limits = sandbox.Limits{MemoryBytes: 2 << 20}
	}
	g := gatewaytest.Start(t, opts)
	tr := loadTransport(fillers + 10)
	sessions := connectMany(t, g, g.URL+"/mcp", 10, tr)
	// The normal executions are another tenant's: its share of the running
	// places keeps them from queueing behind the fillers.
	other := connectVia(t, g.URL+"/mcp", g.NewKey(t, store.Scope{Org: "other", Project: "p"}), tr)
	lim := g.Service.Admission().Limits()
	t.Logf("admission: %s", lim)

	resetPeakRSS()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[pmlerr.Code]int{}
	var failures []string
	for i := range fillers {
		wg.Go(func() {
			a, err := answer(ctx, sessions[i%len(sessions)], `const a = []; while (true) a.push('x'.repeat(1000) + Math.random());`)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				failures = append(failures, err.Error())
			case a.ErrorCode == pmlerr.MemoryLimit || a.ErrorCode == pmlerr.Overloaded:
				codes[a.ErrorCode]++
			default:
				failures = append(failures, string(a.Status)+" "+string(a.ErrorCode)+": "+a.Error)
			}
		})
	}
	// Normal executions interleaved, until the fillers are done.
	fillersDone := make(chan struct{})
	var normal sync.WaitGroup
	normalRuns := 0
	normal.Go(func() {
		for {
			select {
			case <-fillersDone:
				return
			default:
			}
			if err := execute(ctx, other, threeStdCalls, threeStdCallsResult); err != nil {
				mu.Lock()
				failures = append(failures, "normal execution: "+err.Error())
				mu.Unlock()
				return
			}
			normalRuns++
		}
	})
	wg.Wait()
	close(fillersDone)
	normal.Wait()
	_, hwm := memory(t)
	t.Logf("%d heap fillers: %v; %d normal executions interleaved; peak RSS %.0f MiB", fillers, codes, normalRuns, hwm)
	if len(failures) > 0 {
		t.Fatalf("%d unexpected answers; first: %s", len(failures), failures[0])
	}
	if normalRuns == 0 {
		t.Fatal("no normal execution completed while the fillers ran")
	}
	if !raceEnabled && hwm >= 2048 {
		t.Fatalf("peak RSS %.0f MiB, want under 2 GiB", hwm)
	}
	if err := execute(ctx, sessions[0], threeStdCalls, threeStdCallsResult); err != nil {
		t.Fatalf("after the load: %v", err)
	}
}
