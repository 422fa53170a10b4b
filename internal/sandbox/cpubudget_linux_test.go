//go:build linux

package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/pmlerr"
)

// envBusy makes the test binary a busy process: it spins that many threads
// for at most busyFor, the load of the tests below.
const envBusy = "PML_SANDBOX_TEST_BUSY_THREADS"

const busyFor = time.Minute

// loadBudget is the CPU budget of the loaded runs: long enough that the
// engine's poll interval and the machine's noise are small beside it.
const loadBudget = 400 * time.Millisecond

// The CPU budget counts the CPU time of the thread running the JS: on a
// machine whose cores are all busy, a loop ends at its budget having used
// about that much CPU, after a wall time well past it (docs/limits.md).
// Before, the budget counted the wall time spent in the engine and ended
// such a loop having used 60 to 70% of it (issue 42).
func TestCPUBudgetUnderLoad(t *testing.T) {
	if n := os.Getenv(envBusy); n != "" {
		spin(t, n)
		return
	}
	startLoad(t)
	for _, c := range []struct{ name, body string }{
		{"a loop in a function", "for (;;) {}"},
		{"a loop on microtasks", "for (;;) await null"},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := threadCPUs(t)
			start := time.Now()
			_, err := Run(context.Background(), fn(c.body), nil, nil, Limits{CPUBudget: loadBudget, Timeout: time.Minute})
			wall := time.Since(start)
			used := maxGrowth(before, threadCPUs(t))
			t.Logf("ended after %v of wall time; the busiest thread used %v of CPU meanwhile", wall, used)
			pe, ok := pmlerr.As(err)
			if !ok || pe.Code != pmlerr.ExecutionTimeout || pe.Details["limit"] != "cpu_budget" {
				t.Fatalf("got %v, want EXECUTION_TIMEOUT at the CPU budget", err)
			}
			if used < loadBudget*8/10 || used > loadBudget*3/2 {
				t.Errorf("the run's thread used %v of CPU for a budget of %v", used, loadBudget)
			}
			if wall < loadBudget*5/4 {
				t.Errorf("the run took %v of wall time for a budget of %v: it was not starved (without the load, this test shows nothing)", wall, loadBudget)
			}
		})
	}
}

// A run that used up its CPU budget on a busy machine leaves nothing
// running, and the next run is served at once.
func TestNextRunAfterCPUBudgetUnderLoad(t *testing.T) {
	startLoad(t)
	_, err := Run(context.Background(), fn("for (;;) {}"), nil, nil, Limits{CPUBudget: loadBudget, Timeout: time.Minute})
	if pe, ok := pmlerr.As(err); !ok || pe.Code != pmlerr.ExecutionTimeout {
		t.Fatalf("got %v, want EXECUTION_TIMEOUT", err)
	}
	// The process's CPU after the answer: the busy threads are another
	// process's, so this is what the run left behind.
	c0 := processCPU(t)
	time.Sleep(afterAnswer)
	if spent := processCPU(t) - c0; spent > 100*time.Millisecond {
		t.Errorf("the process spent %v of CPU in the %v after the answer", spent, afterAnswer)
	}
	start := time.Now()
	tt := &testTools{}
	res, err := Run(context.Background(), fn("return await mcp.math.add({a: 1, b: 2})"), nil, tt.call, testLimits())
	if err != nil || string(res.Value) != "3" {
		t.Fatalf("the next run: %s, %v", res.Value, err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the next run took %v", d)
	}
}

// startLoad keeps every core of the machine busy until the test ends, with
// twice as many spinning threads as cores in a process of their own, so
// that the process's own CPU is the runs'.
func startLoad(t *testing.T) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	threads := 2 * runtime.NumCPU()
	cmd := exec.Command(exe, "-test.run=^TestCPUBudgetUnderLoad$")
	cmd.Env = append(os.Environ(), envBusy+"="+strconv.Itoa(threads), "GOMAXPROCS="+strconv.Itoa(threads))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	// A run made before the pool of VMs is full pays for a VM, and the
	// pool refills in the background: both before the load starts.
	for range 4 {
		if _, err := Run(context.Background(), fn("return 1"), nil, nil, testLimits()); err != nil {
			t.Fatal(err)
		}
	}
	waitPoolWarm(t)
	time.Sleep(200 * time.Millisecond) // the busy threads are running
}

// spin is the busy process: n goroutines spinning on as many threads
// (GOMAXPROCS), until busyFor passed.
func spin(t *testing.T, n string) {
	threads, err := strconv.Atoi(n)
	if err != nil {
		t.Fatal(err)
	}
	end := time.Now().Add(busyFor)
	done := make(chan struct{})
	for range threads {
		go func() {
			defer func() { done <- struct{}{} }()
			for x := 0; time.Now().Before(end); x++ {
				for range 1 << 16 {
					x ^= x << 1
				}
			}
		}()
	}
	for range threads {
		<-done
	}
}

// threadCPUs returns the CPU time each thread of the process has used, by
// thread id, as the kernel counts it.
func threadCPUs(t *testing.T) map[string]time.Duration {
	t.Helper()
	dirs, err := filepath.Glob("/proc/self/task/*")
	if err != nil {
		t.Fatal(err)
	}
	cpu := map[string]time.Duration{}
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "schedstat"))
		if os.IsNotExist(err) && len(cpu) == 0 {
			t.Skip("the kernel keeps no per-thread schedstat")
		}
		if err != nil {
			continue // the thread ended
		}
		f := strings.Fields(string(b))
		if len(f) == 0 {
			continue
		}
		ns, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			t.Fatal(fmt.Errorf("read %s/schedstat: %w", d, err))
		}
		cpu[filepath.Base(d)] = time.Duration(ns)
	}
	return cpu
}

// maxGrowth is the most CPU time one thread used between two readings of
// threadCPUs: a busy loop in one stretch of JS runs on one thread.
func maxGrowth(before, after map[string]time.Duration) time.Duration {
	var most time.Duration
	for id, c := range after {
		most = max(most, c-before[id])
	}
	return most
}
