//go:build linux && loadtest

package scale_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/store/pgtest"
	"github.com/pml-go/pml/internal/wire"
)

// The load test: N concurrent MCP clients run server-only code through the
// round-robin balancer for a fixed time, against 1 replica on SQLite, 1 on
// PostgreSQL and 2 on PostgreSQL, one after the other in one run:
//
//	go test -tags loadtest -run TestLoad -v ./test/scale/
//
// PML_LOAD_CLIENTS (default 32, at most 512) and PML_LOAD_SECONDS (default
// 10, at most 120) size it; -run TestLoad/postgres-2 runs one configuration.
// Every request must succeed.
func TestLoad(t *testing.T) {
	cfg := loadConfigFromEnv(t)
	configs := []struct {
		name     string
		replicas int
		db       func(t *testing.T) (dsn string, pgPort int)
	}{
		{"sqlite-1", 1, func(t *testing.T) (string, int) { return filepath.Join(t.TempDir(), "gateway.db"), 0 }},
		{"postgres-1", 1, pgDatabase},
		{"postgres-2", 2, pgDatabase},
	}
	var table []string
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			dsn, pgPort := c.db(t)
			replicas := startReplicas(t, c.replicas, dsn)
			lb := startBalancer(t, replicas...)
			key := createKey(t, dsn)
			r := runLoad(t, cfg, lb.url, key, replicas, pgPort)
			t.Log(r.report())
			table = append(table, fmt.Sprintf("%-11s %8.0f %8.2f %8.2f %6d   %s", c.name, r.throughput(), ms(r.percentile(50)), ms(r.percentile(99)), r.errors, r.cpuSplit()))
			if r.errors > 0 {
				t.Errorf("%d requests failed; first: %v", r.errors, r.firstErr)
			}
		})
	}
	t.Logf("%d clients, %v each configuration, server-only code (2 tool calls + a stored trace), through the balancer:\n"+
		"config        exec/s   p50 ms   p99 ms errors   CPU: replicas / postgres / clients+balancer\n%s",
		cfg.clients, cfg.duration, strings.Join(table, "\n"))
}

func pgDatabase(t *testing.T) (string, int) {
	dsn := pgtest.Start(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	port, _ := strconv.Atoi(u.Port())
	return dsn, port
}

type loadConfig struct {
	clients  int
	duration time.Duration
	warmup   time.Duration
}

func loadConfigFromEnv(t *testing.T) loadConfig {
	cfg := loadConfig{clients: 32, duration: 10 * time.Second, warmup: 2 * time.Second}
	if v := os.Getenv("PML_LOAD_CLIENTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 512 {
			t.Fatalf("PML_LOAD_CLIENTS=%q: want 1..512", v)
		}
		cfg.clients = n
	}
	if v := os.Getenv("PML_LOAD_SECONDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 120 {
			t.Fatalf("PML_LOAD_SECONDS=%q: want 1..120", v)
		}
		cfg.duration = time.Duration(n) * time.Second
	}
	return cfg
}

// loadRun is one configuration's measurements over the measured window.
type loadRun struct {
	window    time.Duration
	latencies []time.Duration // of successful requests
	errors    int
	firstErr  error
	memory    []string // per replica
	cpu       struct{ replicas, postgres, self time.Duration }
}

// runLoad drives cfg.clients MCP clients against url: a warm-up, then the
// measured window, in which every request's latency is recorded.
func runLoad(t *testing.T, cfg loadConfig, url, key string, replicas []*replica, pgPort int) *loadRun {
	ctx, cancel := context.WithTimeout(t.Context(), cfg.warmup+cfg.duration+30*time.Second)
	defer cancel()
	begin := time.Now().Add(cfg.warmup)
	end := begin.Add(cfg.duration)
	var (
		mu  sync.Mutex
		run = &loadRun{window: cfg.duration}
		wg  sync.WaitGroup
	)
	for range cfg.clients {
		wg.Go(func() {
			c := newMCPClient(url, key)
			defer c.close()
			var mine []time.Duration
			var errs int
			var firstErr error
			for {
				start := time.Now()
				if start.After(end) {
					break
				}
				a, err := c.execute(ctx, serverCode)
				took := time.Since(start)
				if err == nil && a.Status != wire.StatusSuccess {
					err = fmt.Errorf("%s", a)
				}
				if start.Before(begin) {
					continue
				}
				if err != nil {
					errs++
					firstErr = cmpErr(firstErr, err)
					continue
				}
				mine = append(mine, took)
			}
			mu.Lock()
			defer mu.Unlock()
			run.latencies = append(run.latencies, mine...)
			run.errors += errs
			run.firstErr = cmpErr(run.firstErr, firstErr)
		})
	}
	// CPU is sampled at the edges of the measured window.
	time.Sleep(time.Until(begin))
	replicaCPU, pgCPU, self := cpuNow(replicas, pgPort)
	time.Sleep(time.Until(end))
	r2, p2, s2 := cpuNow(replicas, pgPort)
	run.cpu.replicas, run.cpu.postgres, run.cpu.self = r2-replicaCPU, p2-pgCPU, s2-self
	for _, r := range replicas {
		rss, peak, err := r.memory()
		if err != nil {
			t.Fatal(err)
		}
		run.memory = append(run.memory, fmt.Sprintf("%s RSS %.1f MiB (peak %.1f MiB)", r.name, float64(rss)/1024, float64(peak)/1024))
	}
	wg.Wait()
	slices.Sort(run.latencies)
	return run
}

func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

func cpuNow(replicas []*replica, pgPort int) (replicaCPU, pgCPU, self time.Duration) {
	for _, r := range replicas {
		replicaCPU += processCPU(r.cmd.Process.Pid)
	}
	if pgPort != 0 {
		pgCPU = postgresCPU(pgPort)
	}
	return replicaCPU, pgCPU, selfCPU()
}

func (r *loadRun) throughput() float64 {
	return float64(len(r.latencies)) / r.window.Seconds()
}

func (r *loadRun) percentile(p int) time.Duration {
	if len(r.latencies) == 0 {
		return 0
	}
	return r.latencies[min(len(r.latencies)-1, len(r.latencies)*p/100)]
}

// cpuSplit says where the CPU went: per execution, in the replicas, in
// PostgreSQL and in this process (clients and balancer), and how much of
// the machine all of it used.
func (r *loadRun) cpuSplit() string {
	n := float64(max(1, len(r.latencies)))
	total := r.cpu.replicas + r.cpu.postgres + r.cpu.self
	return fmt.Sprintf("%.2f / %.2f / %.2f ms per execution; %.0f%% of %d CPUs",
		ms(r.cpu.replicas)/n, ms(r.cpu.postgres)/n, ms(r.cpu.self)/n,
		100*total.Seconds()/(float64(runtime.NumCPU())*r.window.Seconds()), runtime.NumCPU())
}

func (r *loadRun) report() string {
	return fmt.Sprintf("%d executions in %v: %.0f/s, p50 %.2f ms, p99 %.2f ms, max %.2f ms, %d errors; %s; CPU replicas/postgres/clients+balancer: %s",
		len(r.latencies), r.window, r.throughput(), ms(r.percentile(50)), ms(r.percentile(99)), ms(r.percentile(100)),
		r.errors, strings.Join(r.memory, ", "), r.cpuSplit())
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
