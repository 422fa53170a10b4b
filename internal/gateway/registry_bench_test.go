package gateway_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// registryClients is the concurrency for BenchmarkRegistryGet.
const registryClients = 32

// BenchmarkRegistryGet is GET /mcp/{fqdn} of a capability (an entry of the
// SQLite store, behind the key check) over loopback by 32 concurrent clients
// on one keep-alive pool: "200" fetches the code, "304" revalidates it with
// If-None-Match; "200_serial" is one client, for the latency of a request
// that does not queue behind 31 others (with 32 clients in a closed loop,
// p50 is about 32 / throughput). It reports p50/p99 latency, req/s and CPU
// per request (gateway and clients share the process).
func BenchmarkRegistryGet(b *testing.B) {
	g := startRegistry(b)
	ref := learn(b, g.Connect(b, g.Key, false), sumCode, "Sum two numbers")
	url := g.URL + "/mcp/" + ref.FQDN
	client := &http.Client{Transport: bearer{key: g.Key, next: loadTransport(registryClients)}}
	first, err := client.Get(url)
	if err != nil {
		b.Fatal(err)
	}
	etag := first.Header.Get("ETag")
	first.Body.Close()
	for _, bc := range []struct {
		name    string
		clients int
		header  string
		status  int
	}{
		{"200", registryClients, "", http.StatusOK},
		{"304", registryClients, etag, http.StatusNotModified},
		{"200_serial", 1, "", http.StatusOK},
	} {
		b.Run(bc.name, func(b *testing.B) {
			get := func(ctx context.Context) error {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
				if bc.header != "" {
					req.Header.Set("If-None-Match", bc.header)
				}
				resp, err := client.Do(req)
				if err != nil {
					return err
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != bc.status {
					return fmt.Errorf("HTTP %d, want %d", resp.StatusCode, bc.status)
				}
				return nil
			}
			for range bc.clients { // warm the connection pool
				if err := get(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
			var (
				next    atomic.Int64
				mu      sync.Mutex
				latency = make([]time.Duration, 0, b.N)
				failed  atomic.Value
				wg      sync.WaitGroup
			)
			cpu := cpuTime()
			b.ResetTimer()
			start := time.Now()
			for range bc.clients {
				wg.Go(func() {
					var mine []time.Duration
					for next.Add(1) <= int64(b.N) {
						t0 := time.Now()
						if err := get(context.Background()); err != nil {
							failed.Store(err)
							return
						}
						mine = append(mine, time.Since(t0))
					}
					mu.Lock()
					latency = append(latency, mine...)
					mu.Unlock()
				})
			}
			wg.Wait()
			wall := time.Since(start)
			b.StopTimer()
			if err, _ := failed.Load().(error); err != nil {
				b.Fatal(err)
			}
			slices.Sort(latency)
			reportLatency(b, latency)
			b.ReportMetric(float64(b.N)/wall.Seconds(), "req/s")
			reportCPU(b, cpu)
		})
	}
}
