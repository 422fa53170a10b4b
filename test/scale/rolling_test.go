//go:build linux

package scale_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/store/pgtest"
	"github.com/pml-go/pml/internal/wire"
)

// readyBalancer is a load balancer with active health checks, as a
// Kubernetes Service or a cloud balancer has: it polls each backend's
// /readyz and sends requests only to ready ones, round robin. A backend is
// swapped for its replacement when a replica restarts.
type readyBalancer struct {
	url string

	mu       sync.Mutex
	backends []*readyBackend
	next     int
}

type readyBackend struct {
	replica *replica
	proxy   *httputil.ReverseProxy
	ready   atomic.Bool
}

const readyPoll = 50 * time.Millisecond

func startReadyBalancer(t *testing.T, replicas ...*replica) *readyBalancer {
	t.Helper()
	b := &readyBalancer{}
	for _, r := range replicas {
		b.backends = append(b.backends, b.backend(t, r))
	}
	srv := httptest.NewServer(b)
	ctx, stop := context.WithCancel(context.Background())
	poll := func() {
		b.mu.Lock()
		backends := slices.Clone(b.backends)
		b.mu.Unlock()
		for _, be := range backends {
			be.ready.Store(isReady(ctx, be.replica.url))
		}
	}
	// Every backend is ready before a request can come: a balancer that had
	// not yet asked them would refuse the test's first runs.
	for _, be := range b.backends {
		waitReady(t, be.replica)
		be.ready.Store(true)
	}
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(readyPoll):
			}
			poll()
		}
	}()
	t.Cleanup(func() {
		stop()
		<-polled
		srv.CloseClientConnections()
		srv.Close()
	})
	b.url = srv.URL
	return b
}

func (b *readyBalancer) backend(t *testing.T, r *replica) *readyBackend {
	t.Helper()
	u, err := url.Parse(r.url)
	if err != nil {
		t.Fatal(err)
	}
	return &readyBackend{replica: r, proxy: httputil.NewSingleHostReverseProxy(u)}
}

func isReady(ctx context.Context, base string) bool {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/readyz", nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// waitReady waits for r's /readyz to answer 200.
func waitReady(t *testing.T, r *replica) {
	t.Helper()
	deadline := time.Now().Add(startupTimeout)
	for !isReady(t.Context(), r.url) {
		if time.Now().After(deadline) {
			t.Fatalf("%s never ready:\n%s", r.name, r.log)
		}
		time.Sleep(readyPoll)
	}
}

// replace puts r in the place of backend i, once r is ready.
func (b *readyBalancer) replace(t *testing.T, i int, r *replica) {
	t.Helper()
	waitReady(t, r)
	be := b.backend(t, r)
	be.ready.Store(true)
	b.mu.Lock()
	b.backends[i] = be
	b.mu.Unlock()
}

func (b *readyBalancer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b.mu.Lock()
	var pick *readyBackend
	for range b.backends {
		be := b.backends[b.next%len(b.backends)]
		b.next++
		if be.ready.Load() {
			pick = be
			break
		}
	}
	b.mu.Unlock()
	if pick == nil {
		http.Error(w, "no ready backend", http.StatusServiceUnavailable)
		return
	}
	pick.proxy.ServeHTTP(w, r)
}

// terminate sends SIGTERM and waits for the replica to exit by itself; its
// exit status must be 0.
func terminate(t *testing.T, r *replica) {
	t.Helper()
	if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-r.exited:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s still running 30 s after SIGTERM:\n%s", r.name, r.log)
	}
	if code := r.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("%s exited %d after SIGTERM:\n%s", r.name, code, r.log)
	}
}

// timedRun is one execution as a client saw it.
type timedRun struct {
	start   time.Time
	took    time.Duration
	traceID string
	mark    string // the file the execution's count call appended to
	err     error
}

// A rolling update under load: two replicas on PostgreSQL behind a balancer
// that follows /readyz; each replica in turn gets SIGTERM, drains and exits
// 0, and a new one takes its place. No execution fails, every answered
// execution's trace is stored, and none runs twice (each counts itself in a
// file of its own, through a hosted MCP server, exactly once).
func TestRollingRestartLosesNothing(t *testing.T) {
	dir := t.TempDir()
	config := fixtureConfig(t, dir)
	// The delay is several health-check periods, as in the Helm chart.
	flags := []string{"--config", config, "--shutdown-delay", "500ms", "--shutdown-grace", "20s"}
	d := deploy(t, pgtest.Start(t), 2, flags...)
	lb := startReadyBalancer(t, d.replicas...)
	tracesBefore, _ := d.rows(t)

	var (
		mu      sync.Mutex
		runs    []timedRun
		stop    atomic.Bool
		wg      sync.WaitGroup
		counter atomic.Int64
	)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	const clients = 6
	for range clients {
		wg.Go(func() {
			c := newMCPClient(lb.url, d.key)
			defer c.close()
			for !stop.Load() {
				mark := filepath.Join(dir, fmt.Sprintf("run-%d", counter.Add(1)))
				// A slow call keeps executions in flight when a replica drains.
				code := fmt.Sprintf(`await mcp.fx.count({ file: %q }); await mcp.fx.sleep({ ms: 150 }); return await mcp.math.add({ a: 1, b: 2 })`, mark)
				start := time.Now()
				a, err := c.execute(ctx, code)
				if err == nil && a.Status != wire.StatusSuccess {
					err = fmt.Errorf("answer: %s", a)
				}
				mu.Lock()
				runs = append(runs, timedRun{start: start, took: time.Since(start), traceID: a.TraceID, mark: mark, err: err})
				mu.Unlock()
			}
		})
	}

	time.Sleep(time.Second) // warm-up: hosted servers start, caches fill
	steadyFrom := time.Now()
	time.Sleep(2 * time.Second) // steady state
	restartFrom := time.Now()
	inFlight := regexp.MustCompile(`admitting nothing new.* in_flight=(\d+)`)
	for i, old := range d.replicas {
		// An execution on this replica outlasts the shutdown delay: it must
		// run to its answer within the grace.
		slowMark := filepath.Join(dir, "slow-"+old.name)
		slow := make(chan timedRun, 1)
		go func() {
			c := newMCPClient(old.url, d.key)
			defer c.close()
			start := time.Now()
			a, err := c.execute(ctx, fmt.Sprintf(`await mcp.fx.count({ file: %q }); await mcp.fx.sleep({ ms: 1500 }); return 1`, slowMark))
			if err == nil && a.Status != wire.StatusSuccess {
				err = fmt.Errorf("answer: %s", a)
			}
			slow <- timedRun{start: start, took: time.Since(start), traceID: a.TraceID, mark: slowMark, err: err}
		}()
		waitForFile(t, slowMark)
		terminate(t, old)
		m := inFlight.FindStringSubmatch(old.log.String())
		if m == nil || m[1] == "0" {
			t.Fatalf("%s drained without the slow execution in flight:\n%s", old.name, old.log)
		}
		r := <-slow
		if r.err != nil {
			t.Fatalf("the execution in flight on %s at SIGTERM: %v", old.name, r.err)
		}
		mu.Lock()
		runs = append(runs, r)
		mu.Unlock()
		fresh := startReplica(t, old.name+"'", d.dsn, flags...)
		lb.replace(t, i, fresh)
		d.replicas[i] = fresh
		time.Sleep(500 * time.Millisecond)
	}
	restartTo := time.Now()
	time.Sleep(time.Second)
	stop.Store(true)
	wg.Wait()

	var steady, restart []time.Duration
	for _, r := range runs {
		if r.err != nil {
			t.Errorf("an execution failed (started %v into the test): %v", r.start.Sub(restartFrom), r.err)
			continue
		}
		switch {
		case strings.HasPrefix(filepath.Base(r.mark), "slow-"): // the drain probes: not the clients' latency
		case r.start.Before(steadyFrom):
		case r.start.Before(restartFrom):
			steady = append(steady, r.took)
		case r.start.Before(restartTo):
			restart = append(restart, r.took)
		}
		body, err := os.ReadFile(r.mark)
		if n := strings.Count(string(body), "\n"); err != nil || n != 1 {
			t.Errorf("execution %s counted itself %d times (%v)", r.traceID, n, err)
		}
	}
	if len(restart) == 0 {
		t.Fatal("no execution ran during the restarts")
	}
	// Every run the clients started left one mark at most: none ran without
	// an answer.
	marks, _ := filepath.Glob(filepath.Join(dir, "*-*"))
	if len(marks) != len(runs) {
		t.Errorf("%d executions ran their first call, %d were answered", len(marks), len(runs))
	}
	stored, tracesAfter := d.traces(t)
	for _, r := range runs {
		if r.err == nil && !stored[r.traceID] {
			t.Errorf("trace %s of an answered execution is not stored", r.traceID)
		}
	}
	if tracesAfter != tracesBefore+len(runs) {
		t.Errorf("traces: %d before, %d executions answered, %d after", tracesBefore, len(runs), tracesAfter)
	}
	t.Logf("rolling restart: %d executions, 0 failed; steady p50 %v p99 %v (%d runs); during the restarts p50 %v p99 %v (%d runs, %.1f s)",
		len(runs), pct(steady, 50), pct(steady, 99), len(steady), pct(restart, 50), pct(restart, 99), len(restart), restartTo.Sub(restartFrom).Seconds())
}

// pct is the p-th percentile of ds.
func pct(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}
