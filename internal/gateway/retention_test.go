package gateway_test

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/gateway/traceapi"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/testfixture"
	"github.com/pml-go/pml/internal/tracing"
	"github.com/pml-go/pml/internal/wire"
)

// waitTotal polls the tenant's trace count until it is want.
func waitTotal(t *testing.T, g *gatewaytest.Gateway, key string, want int) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		got := listTraces(t, g.URL, key, "").Total
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d traces stored, want %d", got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A tenant past its count keeps its newest traces, without waiting for the
// next timed pass (a tenth of the count in writes wakes one); another
// tenant under the count keeps all of its own.
func TestRetentionKeepsTheNewestPerTenant(t *testing.T) {
	g := gatewaytest.Start(t, gateway.Options{Retention: &traceapi.Retention{MaxCount: 5, Interval: time.Hour}})
	other := g.NewKey(t, store.Scope{Org: "globex", Project: "web"})
	postTraces(t, g.URL, other, traceAt(time.Now(), 0, "wf", true, "fs:read"), traceAt(time.Now(), time.Second, "wf", true, "fs:read"))
	s := g.Connect(t, g.Key, false)
	var last []string
	for i := range 12 {
		a := gatewaytest.Execute(t, s, wire.ExecuteRequest{Code: `return await mcp.math.add({ a: 1, b: ` + strconv.Itoa(i) + ` })`})
		if a.Status != wire.StatusSuccess {
			t.Fatalf("%+v", a)
		}
		last = append(last, a.TraceID)
	}
	waitTotal(t, g, g.Key, 5)
	l := listTraces(t, g.URL, g.Key, "")
	kept := map[string]bool{}
	for _, tr := range l.Traces {
		kept[tr.TraceID] = true
	}
	for _, id := range last[len(last)-5:] {
		if !kept[id] {
			t.Errorf("newest trace %s was deleted", id)
		}
	}
	if got := listTraces(t, g.URL, other, "").Total; got != 2 {
		t.Errorf("the other tenant has %d traces, want 2", got)
	}
	if n := testutil.ToFloat64(g.Service.Metrics().TracesPruned); n != 7 {
		t.Errorf("pml_traces_pruned_total = %v, want 7", n)
	}
	// The gateway still serves and stores.
	if a := gatewaytest.Execute(t, s, wire.ExecuteRequest{Code: `return 1`}); a.Status != wire.StatusSuccess {
		t.Fatalf("%+v", a)
	}
}

// Traces older than the age limit go on the next pass. (One older than the
// limit when posted is refused: TestPostedTraceOutOfBounds.)
func TestRetentionByAge(t *testing.T) {
	g := gatewaytest.Start(t, gateway.Options{Retention: &traceapi.Retention{MaxAge: 24 * time.Hour, Interval: 20 * time.Millisecond}})
	old := traceAt(time.Now().Add(-24*time.Hour+2*time.Second), 0, "wf", true, "fs:read")
	fresh := traceAt(time.Now(), 0, "wf", true, "fs:read")
	postTraces(t, g.URL, g.Key, old, fresh)
	waitTotal(t, g, g.Key, 1)
	if got := listTraces(t, g.URL, g.Key, "").Traces[0].TraceID; got != fresh.TraceID {
		t.Errorf("kept %s, want the fresh trace", got)
	}
}

// A negative limit is refused when the gateway opens; a valid one opens.
func TestRetentionRejectsNegativeLimits(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []traceapi.Retention{{MaxAge: -time.Second}, {MaxCount: -1}, {Interval: -time.Minute}} {
		_, _, err := gateway.Open(context.Background(), gateway.Options{DB: filepath.Join(dir, "g.db"), Retention: &p})
		if err == nil || !strings.Contains(err.Error(), "none may be negative") {
			t.Errorf("%+v: err = %v", p, err)
		}
	}
	svc, closer, err := gateway.Open(context.Background(), gateway.Options{DB: filepath.Join(dir, "g.db"), Retention: &traceapi.Retention{}})
	if err != nil {
		t.Fatal(err)
	}
	defer closer.Close()
	if err := svc.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// With no options (local mode's case), the default policy runs: a trace
// past the default age is deleted by the first pass.
func TestRetentionDefaultPolicy(t *testing.T) {
	db := filepath.Join(t.TempDir(), "g.db")
	svc, closer, err := gateway.Open(context.Background(), gateway.Options{DB: db, Retention: &traceapi.Retention{}})
	if err != nil {
		t.Fatal(err)
	}
	ancient := traceAt(time.Now().Add(-traceapi.DefaultRetentionAge-time.Hour), 0, "wf", true, "fs:read")
	recent := traceAt(time.Now(), 0, "wf", true, "fs:read")
	if _, err := svc.IngestTraces(context.Background(), gateway.Caller{Scope: gateway.LocalScope, IsPackage: true}, []tracing.Trace{ancient, recent}); err != nil {
		t.Fatal(err)
	}
	closer.Close()

	svc, closer, err = gateway.Open(context.Background(), gateway.Options{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	defer closer.Close()
	deadline := time.Now().Add(15 * time.Second)
	for {
		_, total, err := svc.Store().ListTraces(context.Background(), store.TraceFilter{Scope: gateway.LocalScope})
		if err != nil {
			t.Fatal(err)
		}
		if total == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d traces after the default pass, want 1", total)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := svc.Store().TraceByID(context.Background(), gateway.LocalScope, recent.TraceID); err != nil {
		t.Errorf("recent trace: %v", err)
	}
}

// Options.Busy is told of the background work, retention passes and the
// learning of posted traces, and each start is ended (pml gateway's
// procscale counts them as requests).
func TestBusyCountsBackgroundWork(t *testing.T) {
	var mu sync.Mutex
	inflight, starts := 0, 0
	busy := func() func() {
		mu.Lock()
		defer mu.Unlock()
		inflight++
		starts++
		var once sync.Once
		return func() {
			once.Do(func() {
				mu.Lock()
				defer mu.Unlock()
				inflight--
			})
		}
	}
	g := gatewaytest.Start(t, gateway.Options{Retention: &traceapi.Retention{MaxAge: 24 * time.Hour, Interval: 20 * time.Millisecond}, Busy: busy})
	postTraces(t, g.URL, g.Key, traceAt(time.Now(), 0, "wf", true, "fs:read"))
	testfixture.WaitFor(t, "passes and learning counted, then ended", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return starts >= 3 && inflight == 0
	})
}
