//go:build linux && loadtest

package scale_test

import (
	"context"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// threeStdCalls is internal/gateway's BenchmarkThroughput64 snippet: three
// calls of built-in tools the gateway runs itself, a server-only execution.
const (
	threeStdCalls = `const parsed = await mcp.json.parse({ data: '{"n": 20}' });
const sum = await mcp.math.add({ a: parsed.n, b: 22 });
const h = await mcp.crypto.sha256({ data: "x" });
return { sum, h };`
	threeStdCallsResult = `{"sum":42,"h":"2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881"}`
)

// BenchmarkThroughput64Gateway is BenchmarkThroughput64 against a real `pml
// gateway` process: 64 Go SDK clients in this process, each with its own
// session on one keep-alive transport, run the snippet back to back over
// loopback TCP, and the figure is the gateway process's CPU per execution
// (issue 42's "server-only execution with 64 clients", docs/performance.md
// "Near the floor (issue 42)"), which the in-process benchmark cannot tell
// apart from its clients'.
func BenchmarkThroughput64Gateway(b *testing.B) {
	const clients = 64
	db := filepath.Join(b.TempDir(), "gateway.db")
	r := startReplica(b, "gateway", db)
	key := createKey(b, db)
	sessions := connectSessions(b, r.url, key, "throughput", clients, clients, time.Minute)
	ctx := context.Background()
	if err := runThroughput(ctx, sessions, clients); err != nil { // warm the pools and caches
		b.Fatal(err)
	}
	pid := r.cmd.Process.Pid
	b.ResetTimer()
	start, cpu := time.Now(), processCPU(pid)
	err := runThroughput(ctx, sessions, b.N)
	cpu, wall := processCPU(pid)-cpu, time.Since(start)
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "gateway-cpu-ms/op")
	b.ReportMetric(float64(b.N)/wall.Seconds(), "execs/s")
}

// runThroughput runs n executions of threeStdCalls over sessions, one
// goroutine a session taking the next execution while any is left.
func runThroughput(ctx context.Context, sessions []*mcp.ClientSession, n int) error {
	var (
		left  atomic.Int64
		first error
		once  sync.Once
		wg    sync.WaitGroup
	)
	left.Store(int64(n))
	for _, s := range sessions {
		wg.Go(func() {
			for left.Add(-1) >= 0 {
				if err := executeOnce(ctx, s, threeStdCalls, threeStdCallsResult); err != nil {
					once.Do(func() { first = err })
					return
				}
			}
		})
	}
	wg.Wait()
	return first
}
