package sandbox

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"
)

func addHandler(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
	var a struct{ A, B float64 }
	if err := json.Unmarshal(args, &a); err != nil {
		return nil, err
	}
	return json.RawMessage(strconv.FormatFloat(a.A+a.B, 'g', -1, 64)), nil
}

// waitPoolWarm waits until the pool holds its fresh VMs and closed the used
// ones, as it does between requests that are not back to back.
func waitPoolWarm(testing.TB) {
	machines.kick()
	for len(machines.ready) < cap(machines.ready) || len(machines.retire) > 0 || machines.busy.Load() {
		time.Sleep(50 * time.Microsecond)
	}
}

// BenchmarkSandboxColdStart measures a fresh execution through Run:
//
//   - pooled: requests with a pause between them, so a pre-created VM is
//     ready (the pause is not timed). This is the latency a caller sees.
//   - sustained: requests back to back, so VM creation and closing (done by
//     the pool's worker, on another core when there is one) bound throughput.
func BenchmarkSandboxColdStart(b *testing.B) {
	js := fn("return await mcp.math.add({a: 1, b: 2})")
	once := func(b *testing.B) {
		res, err := Run(context.Background(), js, nil, addHandler, Limits{})
		if err != nil || string(res.Value) != "3" {
			b.Fatalf("%s, %v", res.Value, err)
		}
	}
	b.Run("pooled", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			waitPoolWarm(b)
			b.StartTimer()
			once(b)
		}
	})
	b.Run("sustained", func(b *testing.B) {
		for b.Loop() {
			once(b)
		}
	})
}

// BenchmarkSandboxSnippet measures the sandbox's part of the snippet of
// docs/performance.md "What code mode costs over a direct call": three
// awaited calls answered at once, the results returned, through a pooled
// VM, with a tape (as pml stdio runs it) and without (as the gateway does).
func BenchmarkSandboxSnippet(b *testing.B) {
	js := fn(`const r0 = await mcp.everything.echo({message: "one"});
const r1 = await mcp.everything.echo({message: "two"});
const r2 = await mcp.everything.echo({message: "three"});
return [r0, r1, r2];`)
	echo := func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`"Echo: one"`), nil
	}
	for _, taped := range []bool{false, true} {
		b.Run(map[bool]string{false: "untaped", true: "taped"}[taped], func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				waitPoolWarm(b)
				ctx := context.Background()
				if taped {
					ctx = WithTape(ctx, &memTape{})
				}
				b.StartTimer()
				if _, err := Run(ctx, js, nil, echo, Limits{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSandboxRPC measures one awaited mcp.* round trip inside a running
// execution: one Run makes b.N calls in a row (its start is amortized).
func BenchmarkSandboxRPC(b *testing.B) {
	js := fn("let s = 0; for (let i = 0; i < args.n; i++) s += await mcp.math.add({a: i, b: 1}); return s")
	args := json.RawMessage(`{"n":` + strconv.Itoa(b.N) + `}`)
	b.ResetTimer()
	res, err := Run(context.Background(), js, args, addHandler, Limits{Timeout: MaxTimeout})
	if err != nil {
		b.Fatal(err)
	}
	if want := strconv.Itoa(b.N * (b.N + 1) / 2); string(res.Value) != want && b.N < 1<<20 {
		b.Fatalf("got %s, want %s", res.Value, want)
	}
}

// BenchmarkSandboxReturn measures a run returning 2,000 small records (110
// KB of JSON) against one building them and returning their count: the
// difference is writing the result.
func BenchmarkSandboxReturn(b *testing.B) {
	const build = "const out = []; for (let i = 0; i < 2000; i++) out.push({i, name: 'item ' + i, ok: true, tags: ['a', 'b']});"
	for _, c := range []struct{ name, js string }{
		{"records", fn(build + " return out")},
		{"count", fn(build + " return out.length")},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := Run(context.Background(), c.js, nil, addHandler, Limits{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkClockLoop measures a loop reading the clock and Math.random
// 10,000 times each, without a tape (the gateway) and with one (the package,
// which records the first 65,536 reads of each).
func BenchmarkClockLoop(b *testing.B) {
	js := fn("let s = 0; for (let i = 0; i < 10000; i++) s += Date.now() + Math.random(); return s > 0")
	for _, taped := range []bool{false, true} {
		b.Run(map[bool]string{false: "untaped", true: "taped"}[taped], func(b *testing.B) {
			for b.Loop() {
				ctx := context.Background()
				if taped {
					ctx = WithTape(ctx, &memTape{})
				}
				res, err := Run(ctx, js, nil, addHandler, Limits{})
				if err != nil || string(res.Value) != "true" {
					b.Fatalf("%s, %v", res.Value, err)
				}
			}
		})
	}
}

// BenchmarkBusyLoop measures one iteration of a tight JS loop: one Run
// makes b.N iterations (its start is amortized). The engine polls the
// interrupt handler, which checks the deadline and the CPU budget, every
// few thousand iterations: this is what that poll costs code that computes.
func BenchmarkBusyLoop(b *testing.B) {
	js := fn("let i = 0; for (; i < args.n; i++) {} return i")
	args := json.RawMessage(`{"n":` + strconv.Itoa(b.N) + `}`)
	b.ResetTimer()
	res, err := Run(context.Background(), js, args, addHandler, Limits{Timeout: MaxTimeout, CPUBudget: MaxTimeout})
	if err != nil {
		b.Fatal(err)
	}
	if string(res.Value) != strconv.Itoa(b.N) {
		b.Fatalf("got %s, want %d", res.Value, b.N)
	}
}
