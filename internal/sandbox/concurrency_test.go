package sandbox

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// waitGoroutines waits for the goroutine count to fall to at most n. The
// VM goroutines left idle for the next runs do not count: they hold
// nothing of the runs they served.
func waitGoroutines(t *testing.T, n int) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		g := runtime.NumGoroutine() - vmGoroutines.Idle()
		if g <= n || time.Now().After(deadline) {
			return g
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestThousandConcurrentRunsParkedOnSlowTool(t *testing.T) {
	n := 1000
	if raceEnabled {
		// The race detector makes the transpiled engine ~50x slower: a VM
		// costs ~50 ms of CPU, so 1000 of them would take most of a minute
		// on two cores. The full count runs without -race.
		n = 100
	}
	tt := &testTools{}
	lim := testLimits()
	lim.Timeout = 60 * time.Second
	lim.RPCTimeout = 30 * time.Second // parking is under test, not the RPC timeout; the machine may be busy
	before := rssBytes(t)
	var failed atomic.Int32
	var wg sync.WaitGroup
	start := time.Now()
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := Run(context.Background(), fn("const r = await mcp.test.sleep({ms: 200}); return [r, args.i]"), []byte(`{"i":`+itoa(i)+`}`), tt.call, lim)
			if err != nil || string(res.Value) != `["slept",`+itoa(i)+`]` {
				failed.Add(1)
				t.Errorf("run %d: %s, %v", i, res.Value, err)
			}
		}()
	}
	wg.Wait()
	t.Logf("%d concurrent runs in %v; RSS before %d MiB, after %d MiB, process peak %d MiB",
		n, time.Since(start).Round(time.Millisecond), before>>20, rssBytes(t)>>20, peakRSSBytes(t)>>20)
	if failed.Load() != 0 {
		t.Errorf("%d of %d runs failed", failed.Load(), n)
	}
}

func TestSequentialRunsDoNotLeak(t *testing.T) {
	tt := &testTools{}
	body := fn(`
		const parts = await Promise.all([mcp.math.add({a: 1, b: 2}), mcp.test.echo({s: 'x'.repeat(1000)})]);
		console.log('got', parts[0]);
		try { await mcp.test.fail({code: 'TOOL_ERROR', msg: 'x'}) } catch (e) {}
		return {sum: parts[0], big: new Array(2000).fill('y').join('')};`)
	once := func(n int) {
		for range n {
			if _, err := Run(context.Background(), body, nil, tt.call, testLimits()); err != nil {
				t.Fatal(err)
			}
		}
	}
	rounds := 300
	if raceEnabled {
		rounds = 20
	}
	baseG := runtime.NumGoroutine() - vmGoroutines.Idle()
	once(rounds) // warm up: pool, engine caches, heap
	waitGoroutines(t, baseG+1)
	runtime.GC()
	before := rssBytes(t)
	once(rounds)
	if g := waitGoroutines(t, baseG+1); g > baseG+1 { // +1: the pool worker may still be closing VMs
		t.Errorf("goroutines: %d before, %d after", baseG, g)
	}
	runtime.GC()
	after := rssBytes(t)
	t.Logf("RSS over %d runs: %d KiB -> %d KiB", rounds, before>>10, after>>10)
	// A leaked VM holds its engine heap (hundreds of KiB): leaking one per
	// run would grow RSS by tens of MiB here.
	if after-before > 8<<20 {
		t.Errorf("RSS grew by %d KiB over %d runs", (after-before)>>10, rounds)
	}
}
