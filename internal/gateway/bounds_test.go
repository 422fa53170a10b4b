package gateway_test

import (
	"sync"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/sandbox"
	"github.com/pml-go/pml/internal/wire"
)

// TestResultsBoundedAcrossTheCallPath sends snippets whose tool results
// would grow the gateway by gigabytes: the byte budget of mcp.* ends each
// with MEMORY_LIMIT naming the call, the process's peak memory stays bounded
// (trace copies and results included), and a normal run beside them
// answers.
func TestResultsBoundedAcrossTheCallPath(t *testing.T) {
	// The snippet moves 64 texts of 1 MiB against the default
	// budget of 64 MiB; under the race detector, which slows writing
	// arguments a hundredfold, the same shape is scaled down 16 times.
	budget, text := int64(64<<20), "1 << 20"
	if raceEnabled {
		budget, text = 4<<20, "1 << 16"
	}
	g := gatewaytest.Start(t, gateway.Options{Limits: sandbox.Limits{MaxCallBytes: budget}})
	s := g.Connect(t, g.Key, false)
	before, _ := memory(t)
	resetPeakRSS()
	for _, code := range []string{
		// 64 texts of arguments at once: the last call crosses the budget.
		`await Promise.all(Array.from({length: 64}, () => mcp.string.split({text: 'a'.repeat(` + text + `), separator: ''})))`,
		// Fewer, larger results: each split builds 20 times its text unless
		// the budget refuses to let calls running at once build more than
		// is left.
		`await Promise.all(Array.from({length: 24}, () => mcp.string.split({text: 'a'.repeat(` + text + `), separator: ''})))`,
	} {
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			a := gatewaytest.Execute(t, s, wire.ExecuteRequest{Code: "return await mcp.math.add({a: 2, b: 3})"})
			if a.Status != wire.StatusSuccess || string(a.Result) != "5" || time.Since(start) > 10*time.Second {
				t.Errorf("normal run beside it: %+v after %v", a, time.Since(start))
			}
		}()
		a := gatewaytest.Execute(t, s, wire.ExecuteRequest{Code: code})
		wg.Wait()
		if a.Status != wire.StatusError || a.ErrorCode != pmlerr.MemoryLimit {
			t.Fatalf("%s: got %s %s: %.300s", code, a.Status, a.ErrorCode, a.Error)
		}
		if a.Details["tool"] != "string:split" {
			t.Errorf("%s: MEMORY_LIMIT names %v, want string:split (%s)", code, a.Details["tool"], a.Error)
		}
		if len(a.Error) > 16<<10 {
			t.Errorf("the error is %d bytes", len(a.Error))
		}
	}
	alive(t, s)

	// One call after another, each result dropped: the budget counts what
	// moved, not what is kept (a small budget keeps this quick under -race).
	small := gatewaytest.Start(t, gateway.Options{Limits: sandbox.Limits{MaxCallBytes: 4 << 20}})
	ss := small.Connect(t, small.Key, false)
	a := gatewaytest.Execute(t, ss, wire.ExecuteRequest{Code: `for (;;) await mcp.string.split({text: 'ab'.repeat(1 << 16), separator: 'a'})`})
	if a.Status != wire.StatusError || a.ErrorCode != pmlerr.MemoryLimit || a.Details["tool"] != "string:split" {
		t.Errorf("sequential calls: got %s %s %v: %.300s", a.Status, a.ErrorCode, a.Details["tool"], a.Error)
	}
	alive(t, ss)

	_, peak := memory(t)
	t.Logf("RSS %.0f MiB before, peak %.0f MiB", before, peak)
	// The race detector's shadow memory multiplies the process's memory:
	// the bound means something only without it.
	if !raceEnabled && peak > before+600 {
		t.Errorf("peak RSS %.0f MiB, %.0f MiB before: the results were not bounded", peak, before)
	}
}
