//go:build linux && loadtest

package scale_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/pml-go/pml/internal/wire"
)

// BenchmarkTenThousandParkedGateway parks 10,000 executions at once in a
// real `pml gateway` process, one op a wave, and reports that process's
// peak resident memory (its VmHWM, reset before each wave), its CPU per
// wave and how many executions failed; none may. Each execution calls the
// hosted fixture server's barrier over stdio, which answers only once all
// 10,000 calls wait in it: the wave is held whole at once.
//
//	go test -tags loadtest -run '^$' -bench TenThousandParkedGateway -benchtime 3x ./test/scale/
//
// internal/gateway's BenchmarkTenThousandParked measures the same wave in
// one process with its clients; here the clients are this process, over
// loopback TCP, so the figure is what a gateway holds (docs/performance.md).
// Each parked execution is one TCP connection on either side: a process
// needs 10,000 descriptors and some, under this machine's hard limit of
// 20,000, to which Go raises the soft limit of both at start.
//
// The gateway's admission flags admit the whole wave (by default it admits
// at most 2,048 executions, half of them per tenant) and its per-call
// timeout outlasts it: the benchmark measures what the wave costs, not how
// admission refuses it.
func BenchmarkTenThousandParkedGateway(b *testing.B) {
	const n = 10_000
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil || lim.Cur < n+1024 {
		b.Skipf("needs %d open files; the limit is %d (%v)", n+1024, lim.Cur, err)
	}
	dir := b.TempDir()
	db := filepath.Join(dir, "gateway.db")
	r := startReplica(b, "gateway", db, "--config", fixtureConfig(b, dir),
		"--max-executions", strconv.Itoa(n+64), "--max-executions-per-tenant", strconv.Itoa(n+64),
		"--max-queue", strconv.Itoa(n), "--queue-wait", "1m", "--memory-ceiling-mb", "-1",
		"--max-unauthenticated-conns", strconv.Itoa(2*n),
		"--timeout", "5m", "--rpc-timeout", "5m")
	key := createKey(b, db)

	// Every session's calls go out at once, each on a connection of its own.
	sessions := connectSessions(b, r.url, key, "parked", n/20, n, 5*time.Minute)
	code := fmt.Sprintf(`return await mcp.fx.barrier({ n: %d })`, n)
	pid := r.cmd.Process.Pid
	var peaks []float64
	failed := 0
	var cpu time.Duration
	for b.Loop() {
		if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0); err != nil {
			b.Fatalf("resetting the gateway's peak memory: %v", err)
		}
		before := processCPU(pid)
		errs := parkWave(sessions, n, code)
		cpu += processCPU(pid) - before
		if len(errs) > 0 {
			b.Logf("%d executions failed; first: %v", len(errs), errs[0])
		}
		failed += len(errs)
		_, peak, err := r.memory()
		if err != nil {
			b.Fatal(err)
		}
		peaks = append(peaks, float64(peak)/1024)
	}
	slices.Sort(peaks)
	b.ReportMetric(peaks[len(peaks)/2], "peak-rss-MiB")
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "gateway-cpu-ms/op")
	b.ReportMetric(float64(failed), "failures")
}

// parkWave runs code n times at once over sessions and returns what failed:
// an error or an answer other than the barrier's "released".
func parkWave(sessions []*mcp.ClientSession, n int, code string) []error {
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for i := range n {
		wg.Go(func() {
			err := executeOnce(ctx, sessions[i%len(sessions)], code, `"released"`)
			if err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errs
}

// executeOnce runs code over s and fails unless it answers success with a
// result equal to want's JSON.
func executeOnce(ctx context.Context, s *mcp.ClientSession, code, want string) error {
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "execute", Arguments: wire.ExecuteRequest{Code: code}})
	if err != nil {
		return err
	}
	text, err := resultText("execute", res)
	if err != nil {
		return err
	}
	a, err := decodeAnswer(text)
	if err != nil {
		return err
	}
	var got, wanted any
	if a.Status != wire.StatusSuccess || json.Unmarshal(a.Result, &got) != nil || json.Unmarshal([]byte(want), &wanted) != nil ||
		!reflect.DeepEqual(got, wanted) {
		return fmt.Errorf("answer %s, want the result %s", text, want)
	}
	return nil
}
