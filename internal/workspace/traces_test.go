package workspace

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/gatewayclient"
	"github.com/pml-go/pml/internal/tracing"
	"github.com/pml-go/pml/internal/wire"
)

func trExec(t *testing.T, p *Workspace, code string) wire.Answer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a := p.Execute(ctx, wire.ExecuteRequest{Code: code})
	if a.Status != wire.StatusSuccess || a.TraceID == "" {
		t.Fatalf("execute: %s %s %s", a.Status, a.ErrorCode, a.Error)
	}
	return a
}

// A local run's trace reaches the gateway sanitized: a secret in a tool
// result and the value of a .env key are redacted before the trace leaves
// the machine, and the run's requests to the gateway carry its trace id.
func TestLocalRunTraceReachesGatewaySanitized(t *testing.T) {
	g := trStartGateway(t)
	const envSecret = "hunter2-correct-horse-battery"
	ws := trWorkspace(t, map[string]string{
		".env":     "PAYMENTS_SECRET_VALUE=" + envSecret + "\n",
		"data.txt": "pass " + envSecret + "; key sk-abcdefghijklmnopqrstuvwx0123456789; mail bob@example.com",
	})
	p := trOpen(t, ws, g, trFastSync)
	a := trExec(t, p, `
		const txt = await mcp.filesystem.read_file({ path: "data.txt" });
		const h = await mcp.crypto.sha256({ data: txt });
		return { n: txt.length, h };`)
	if a.ExecutedLocally == nil || !*a.ExecutedLocally {
		t.Fatalf("not a local run: %+v", a)
	}
	trWaitFor(t, "the trace at the gateway", func() bool { ids, _ := g.stored(); return ids[a.TraceID] == 1 })

	tr := g.trace(a.TraceID)
	body, _ := json.Marshal(tr)
	for _, leak := range []string{envSecret, "sk-abcdefghijklmnopqrstuvwx0123456789", "bob@example.com"} {
		if strings.Contains(string(body), leak) {
			t.Errorf("synced trace leaks %q", leak)
		}
	}
	if !tr.ExecutedLocally || !tr.Success || tr.WorkflowID != a.WorkflowID || len(tr.Tasks) != 2 {
		t.Fatalf("synced trace: %s", body)
	}
	if t1, t2 := tr.Tasks[0], tr.Tasks[1]; t1.Routing != "client" || t2.Routing != "server" ||
		!strings.Contains(string(t1.Result), tracing.Redacted) || !strings.Contains(string(t1.Result), "[EMAIL]") ||
		!strings.Contains(string(t2.Args), tracing.Redacted) {
		t.Fatalf("tasks not routed or not redacted: %s", body)
	}

	// W3C trace context: every request carries a valid traceparent, and the
	// server tool call made by the run carries the run's own trace id.
	var inRun int
	for _, r := range g.requests() {
		tc, err := tracing.ParseTraceparent(r.Traceparent)
		if err != nil {
			t.Errorf("%s %s: traceparent %q: %v", r.Method, r.Path, r.Traceparent, err)
			continue
		}
		if tc.TraceID == a.TraceID {
			inRun++
		}
	}
	if inRun != 1 {
		t.Errorf("%d requests carried the run's trace id, want 1 (the crypto:sha256 call)", inRun)
	}
}

// The gateway dies while a batch is in flight (after storing it, before
// answering), more runs happen while it is down, and once it is back every
// trace is there exactly once.
func TestTraceSyncSurvivesGatewayKill(t *testing.T) {
	g := trStartGateway(t)
	inFlight := make(chan struct{})
	var once atomic.Bool
	g.setHook(func(w http.ResponseWriter, r *http.Request, next http.Handler) bool {
		if r.URL.Path != "/api/traces" || !once.CompareAndSwap(false, true) {
			return false
		}
		next.ServeHTTP(discardWriter{header: http.Header{}}, r) // stored; the answer never leaves
		close(inFlight)
		<-r.Context().Done()
		return true
	})
	p := trOpen(t, trWorkspace(t, map[string]string{}), g, trFastSync)
	const code = `return (await mcp.filesystem.list_directory({ path: "." })).length`
	var want []string
	for range 3 {
		want = append(want, trExec(t, p, code).TraceID)
	}
	select {
	case <-inFlight:
	case <-time.After(15 * time.Second):
		t.Fatal("no trace upload reached the gateway")
	}
	g.kill()
	// Offline: client-only code still runs, and its traces wait on disk.
	for range 3 {
		want = append(want, trExec(t, p, code).TraceID)
	}
	if st := p.TraceStats(); st.Depth != 6 || st.Dropped != 0 {
		t.Fatalf("while the gateway is down: %+v, want all 6 queued", st)
	}
	g.setHook(nil)
	g.start()
	trWaitFor(t, "the queue to drain", func() bool { return p.TraceStats().Depth == 0 })
	ids, total := g.stored()
	for _, id := range want {
		if ids[id] != 1 {
			t.Errorf("trace %s stored %d times", id, ids[id])
		}
	}
	if total != len(want) {
		t.Errorf("gateway holds %d traces, want %d", total, len(want))
	}
}

type discardWriter struct{ header http.Header }

func (d discardWriter) Header() http.Header         { return d.header }
func (d discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (d discardWriter) WriteHeader(int)             {}

// A 429 is honoured: the batch is sent again after Retry-After.
func TestTraceSync429Retried(t *testing.T) {
	g := trStartGateway(t)
	var posts atomic.Int32
	g.setHook(func(w http.ResponseWriter, r *http.Request, _ http.Handler) bool {
		if r.URL.Path != "/api/traces" || posts.Add(1) > 1 {
			return false
		}
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
		return true
	})
	p := trOpen(t, trWorkspace(t, map[string]string{}), g, trFastSync)
	a := trExec(t, p, `return (await mcp.filesystem.list_directory({ path: "." })).length`)
	trWaitFor(t, "the trace after the 429", func() bool { ids, _ := g.stored(); return ids[a.TraceID] == 1 })
	var times []time.Time
	for _, r := range g.requests() {
		if r.Path == "/api/traces" {
			times = append(times, r.At)
		}
	}
	if len(times) != 2 {
		t.Fatalf("%d uploads, want 2 (the 429, then the retry)", len(times))
	}
	if gap := times[1].Sub(times[0]); gap < 900*time.Millisecond {
		t.Fatalf("retried after %s, before Retry-After: 1", gap)
	}
}

// Close delivers what the background loop had not (it was backing off), and
// with the gateway gone it returns at once, keeping the traces for the next
// start, which delivers them.
func TestTraceFlushOnClose(t *testing.T) {
	g := trStartGateway(t)
	g.setHook(func(w http.ResponseWriter, r *http.Request, _ http.Handler) bool {
		if r.URL.Path != "/api/traces" {
			return false
		}
		w.WriteHeader(http.StatusServiceUnavailable)
		return true
	})
	ws := trWorkspace(t, map[string]string{})
	slow := tracing.SyncOptions{MinBackoff: time.Hour, MaxBackoff: time.Hour, Interval: time.Hour}
	p := trOpen(t, ws, g, slow)
	a := trExec(t, p, `return 1 + (await mcp.filesystem.list_directory({ path: "." })).length`)
	trWaitFor(t, "a failed upload", func() bool {
		for _, r := range g.requests() {
			if r.Path == "/api/traces" {
				return true
			}
		}
		return false
	})
	g.setHook(nil)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if ids, _ := g.stored(); ids[a.TraceID] != 1 {
		t.Fatalf("Close did not deliver trace %s", a.TraceID)
	}

	// Offline at exit: Close does not wait out the backoff.
	p2 := trOpen(t, ws, g, slow)
	b := trExec(t, p2, `return (await mcp.filesystem.list_directory({ path: "." })).length`)
	g.kill()
	start := time.Now()
	if err := p2.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("Close with the gateway down took %s", d)
	}
	g.start()
	p3 := trOpen(t, ws, g, trFastSync)
	trWaitFor(t, "the trace kept on disk", func() bool { ids, _ := g.stored(); return ids[b.TraceID] == 1 })
	if st := p3.TraceStats(); st.Dropped != 0 {
		t.Fatalf("dropped %d", st.Dropped)
	}
}

// Local mode stores traces in the in-process gateway, with no HTTP, and its
// metrics count the local execution and the backlog.
func TestLocalModeTraces(t *testing.T) {
	svc, closer, err := gateway.Open(context.Background(), gateway.Options{DB: t.TempDir() + "/g.db"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(Options{Workspace: trWorkspace(t, map[string]string{}), Gateway: &gatewayclient.InProcess{Service: svc, Closer: closer.Close}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	a := trExec(t, p, `return (await mcp.filesystem.list_directory({ path: "." })).length`)
	trWaitFor(t, "the trace in process", func() bool {
		_, err := svc.Store().TraceByID(context.Background(), gateway.LocalScope, a.TraceID)
		return err == nil
	})
	// The ingest counts a run just after it stores the trace, so the count
	// is awaited too rather than read once.
	m := svc.Metrics()
	trWaitFor(t, "the local execution counted", func() bool {
		return testutil.ToFloat64(m.Executions.WithLabelValues("local", "success")) >= 1
	})
	if got := testutil.ToFloat64(m.Executions.WithLabelValues("local", "success")); got != 1 {
		t.Errorf("local executions counted %v", got)
	}
}

// In local mode the in-process gateway stores the package's traces without
// sanitizing them a second time (the package did, with the .env values the
// gateway's sanitizer does not know): what it stores is still sanitized.
func TestLocalModeStoresTracesSanitized(t *testing.T) {
	svc, closer, err := gateway.Open(context.Background(), gateway.Options{DB: t.TempDir() + "/g.db"})
	if err != nil {
		t.Fatal(err)
	}
	const envSecret = "hunter2-correct-horse-battery"
	ws := trWorkspace(t, map[string]string{
		".env":     "PAYMENTS_SECRET_VALUE=" + envSecret + "\n",
		"data.txt": "pass " + envSecret + "; key sk-abcdefghijklmnopqrstuvwx0123456789; mail bob@example.com",
	})
	p, err := New(Options{Workspace: ws, Gateway: &gatewayclient.InProcess{Service: svc, Closer: closer.Close}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	a := trExec(t, p, `return (await mcp.filesystem.read_file({ path: "data.txt" })).length`)
	var stored []byte
	trWaitFor(t, "the trace in process", func() bool {
		tr, err := svc.Store().TraceByID(context.Background(), gateway.LocalScope, a.TraceID)
		stored = tr.Body
		return err == nil
	})
	for _, leak := range []string{envSecret, "sk-abcdefghijklmnopqrstuvwx0123456789", "bob@example.com"} {
		if strings.Contains(string(stored), leak) {
			t.Errorf("stored trace leaks %q: %s", leak, stored)
		}
	}
	if !strings.Contains(string(stored), tracing.Redacted) || !strings.Contains(string(stored), "[EMAIL]") {
		t.Errorf("stored trace not sanitized: %s", stored)
	}
}
