//go:build linux

package scale_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/store/pgtest"
	"github.com/pml-go/pml/internal/wire"
)

// requestBound is the longest a request may take during the outage: the
// store's connection attempts are bounded (3 s), so nothing may hang.
const requestBound = 5 * time.Second

// Restart PostgreSQL while clients execute through the balancer. During the
// outage every request either succeeds (its key is cached and the code needs
// nothing else from the database) or fails cleanly and fast: HTTP 503 from
// the balancer's point of view, "Service Unavailable" for the MCP client,
// 503 on /healthz. Once the database is back, requests succeed again
// without restarting the gateways.
func TestFaultDatabaseRestartUnderLoad(t *testing.T) {
	t.Parallel()
	cluster := pgtest.StartCluster(t)
	d := deploy(t, cluster.DSN(), 2)
	// Keys no replica has seen yet: each one needs the database to verify.
	fresh := make(chan string, 200)
	for range cap(fresh) {
		k, err := gateway.CreateKey(t.Context(), d.store, tenant)
		if err != nil {
			t.Fatal(err)
		}
		fresh <- k
	}

	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	var (
		outcomes outcomeCounts
		stop     atomic.Bool
		wg       sync.WaitGroup
	)
	// Clients with a cached key: the steady load.
	for range 4 {
		wg.Go(func() {
			c := newMCPClient(d.lb.url, d.key)
			defer c.close()
			for !stop.Load() {
				start := time.Now()
				a, err := c.execute(ctx, serverCode)
				outcomes.record(t, "cached key", a, err, time.Since(start))
			}
		})
	}
	// New clients with a key never used before: they need the database.
	probe := func() error {
		var key string
		select {
		case key = <-fresh:
		default:
			t.Fatal("out of fresh keys")
		}
		c := newMCPClient(d.lb.url, key)
		defer c.close()
		start := time.Now()
		a, err := c.execute(ctx, serverCode)
		outcomes.record(t, "fresh key", a, err, time.Since(start))
		if err == nil && a.Status != wire.StatusSuccess {
			return fmt.Errorf("%s", a)
		}
		return err
	}

	time.Sleep(300 * time.Millisecond)
	cluster.Stop(t)
	outage := time.Now()
	for time.Since(outage) < 1500*time.Millisecond {
		if err := probe(); err == nil {
			t.Error("a fresh key was accepted while the database was down")
		}
		for _, r := range d.replicas {
			if code := healthz(t, r); code != http.StatusServiceUnavailable {
				t.Errorf("%s /healthz during the outage: %d", r.name, code)
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	cluster.Start(t)
	back := time.Now()

	// Recovery: the first fresh key that works, then every request works.
	for {
		if err := probe(); err == nil {
			break
		}
		if time.Since(back) > 15*time.Second {
			t.Fatalf("no recovery %v after the database came back", time.Since(back))
		}
		time.Sleep(100 * time.Millisecond)
	}
	recovered := time.Since(back)
	afterRecovery := outcomes.snapshot()
	for range 20 {
		if err := probe(); err != nil {
			t.Errorf("after recovery: %v", err)
		}
	}
	time.Sleep(300 * time.Millisecond)
	stop.Store(true)
	wg.Wait()

	final := outcomes.snapshot()
	if n := final.failed + final.unavailable - afterRecovery.failed - afterRecovery.unavailable; n > 0 {
		t.Errorf("%d requests failed after recovery", n)
	}
	if final.unavailable == 0 {
		t.Error("no request saw the outage: the fault was not exercised")
	}
	for _, r := range d.replicas {
		select {
		case <-r.exited:
			t.Errorf("%s exited during the outage\n%s", r.name, r.log)
		default:
		}
		if code := healthz(t, r); code != http.StatusOK {
			t.Errorf("%s /healthz after recovery: %d", r.name, code)
		}
	}
	// A run that succeeds while the database is down (its key cached) cannot
	// store its trace; the gateway answers anyway and counts the trace as
	// dropped. No loss may go uncounted.
	missing, dropped := unstored(t, d, final.traceIDs), 0.0
	for _, r := range d.replicas {
		n, err := r.metric(t.Context(), "pml_traces_dropped_total")
		if err != nil {
			t.Fatal(err)
		}
		dropped += n
	}
	if float64(missing) > dropped {
		t.Errorf("%d traces of successful executions are not stored, but the replicas count %v dropped", missing, dropped)
	}
	t.Logf("outage %v; recovered %v after the restart; %s; %d successful executions have no stored trace, %v traces counted as dropped",
		back.Sub(outage).Round(time.Millisecond), recovered.Round(time.Millisecond), final, missing, dropped)
}

// outcomeCounts classifies the requests of the database fault test.
type outcomeCounts struct {
	mu sync.Mutex
	outcomeSnapshot
}

type outcomeSnapshot struct {
	succeeded, unavailable, failed int
	slowest                        time.Duration
	traceIDs                       []string // of the successes
}

func (s outcomeSnapshot) String() string {
	return fmt.Sprintf("%d succeeded, %d answered 503 Service Unavailable, slowest request %v",
		s.succeeded, s.unavailable, s.slowest.Round(time.Millisecond))
}

// record counts one request; anything but a success or a clean 503 is a
// test error, as is any request slower than requestBound.
func (o *outcomeCounts) record(t *testing.T, who string, a wire.Answer, err error, took time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.slowest = max(o.slowest, took)
	if took > requestBound {
		t.Errorf("%s: a request took %v", who, took)
	}
	switch {
	case err == nil && a.Status == wire.StatusSuccess:
		o.succeeded++
		o.traceIDs = append(o.traceIDs, a.TraceID)
	case err != nil && strings.Contains(err.Error(), http.StatusText(http.StatusServiceUnavailable)):
		o.unavailable++
	case errors.Is(err, context.Canceled):
	default:
		o.failed++
		t.Errorf("%s: not a clean failure: %v %s", who, err, a)
	}
}

func (o *outcomeCounts) snapshot() outcomeSnapshot {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.outcomeSnapshot
}

func healthz(t *testing.T, r *replica) int {
	t.Helper()
	resp, err := http.Get(r.url + "/healthz")
	if err != nil {
		t.Errorf("%s /healthz: %v", r.name, err)
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// unstored counts the ids that have no stored trace.
func unstored(t *testing.T, d *deployment, ids []string) int {
	t.Helper()
	stored, _ := d.traces(t)
	n := 0
	for _, id := range ids {
		if !stored[id] {
			n++
		}
	}
	return n
}
