//go:build unix

package sandbox

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/pmlerr"
)

// runaway is a snippet that must end at its limit and leave nothing
// running: most run a native loop of the engine that never polls its
// interrupt handler, so only revoking the VM's heap stops them.
type runaway struct {
	name    string
	body    string
	code    pmlerr.Code
	message string // substring of the error message, if set
	limits  func(*Limits)
	cancel  time.Duration // cancel the run's context after this long, if set
}

// holes is an array of 2^32-1 holes: the longest array there is, holding
// nothing, so looping over it costs time and no memory.
const holes = "const a = []; a.length = 2 ** 32 - 1;\n"

// arrayLike is an array-like object no built-in can finish walking.
const arrayLike = "const o = {length: 2 ** 53 - 1};\n"

func bigHeap(l *Limits) { l.MemoryBytes = 512 << 20 }

// bigMessage is the 30 MB error message; the race detector, which
// slows reading it a hundredfold, gets 2 MB, still far past the cut.
var bigMessage = map[bool]string{false: "30 << 20", true: "2 << 20"}[raceEnabled]

// slow gives a snippet that must reach a limit other than time the time it
// needs under the race detector.
func slow(l *Limits) { l.Timeout = 30 * time.Second }

// smallCallBudget keeps the byte budget cases quick under the race
// detector, which slows writing arguments a hundredfold.
func smallCallBudget(l *Limits) { slow(l); l.MaxCallBytes = 4 << 20 }

func slowHeap(n int64) func(*Limits) {
	return func(l *Limits) { slow(l); l.MemoryBytes = n }
}

var runawayCorpus = []runaway{
	{name: "includes over holes", body: holes + "return a.includes(1)"},
	{name: "indexOf over holes", body: holes + "return a.indexOf(1)"},
	{name: "lastIndexOf over holes", body: holes + "return a.lastIndexOf(1)"},
	{name: "Array.from of holes", body: holes + "return Array.from(a).length", limits: bigHeap},
	{name: "reverse of holes", body: holes + "a.reverse()"},
	{name: "sort of holes", body: holes + "a.sort()"},
	{name: "copyWithin over holes", body: holes + "a.copyWithin(0, 1)"},
	{name: "fill of holes", body: holes + "a.fill(0)", limits: bigHeap},
	{name: "join of holes", body: holes + "return a.join('').length"},
	{name: "toString of holes", body: holes + "return String(a).length", limits: bigHeap},
	{name: "toLocaleString of holes", body: holes + "return a.toLocaleString().length", limits: bigHeap},
	{name: "forEach over holes", body: holes + "a.forEach(() => {})"},
	{name: "some over holes", body: holes + "return a.some(() => true)"},
	{name: "every over holes", body: holes + "return a.every(() => false)"},
	{name: "filter over holes", body: holes + "return a.filter(() => true).length"},
	{name: "map over holes", body: holes + "return a.map(x => x).length"},
	{name: "reduce over holes", body: holes + "return a.reduce((x, y) => x, 0)"},
	{name: "reduceRight over holes", body: holes + "return a.reduceRight((x, y) => x, 0)"},
	{name: "find over holes", body: holes + "return a.find(x => x === 1)"},
	{name: "findIndex over holes", body: holes + "return a.findIndex(x => x === 1)"},
	{name: "findLast over holes", body: holes + "return a.findLast(x => x === 1)"},
	{name: "findLastIndex over holes", body: holes + "return a.findLastIndex(x => x === 1)"},
	{name: "flat of holes", body: holes + "return a.flat().length"},
	{name: "slice of holes", body: holes + "return a.slice().length"},
	{name: "concat of holes", body: holes + "return a.concat().length"},
	{name: "splice of holes", body: holes + "return a.splice(0).length"},
	{name: "Array constructor then includes", body: "return new Array(2 ** 32 - 1).includes(1)"},
	{name: "includes on an array-like", body: arrayLike + "return Array.prototype.includes.call(o, 1)"},
	{name: "indexOf on an array-like", body: arrayLike + "return Array.prototype.indexOf.call(o, 1)"},
	{name: "lastIndexOf on an array-like", body: arrayLike + "return Array.prototype.lastIndexOf.call(o, 1)"},
	{name: "join on an array-like", body: arrayLike + "return Array.prototype.join.call(o, '').length"},
	{name: "reverse on an array-like", body: arrayLike + "Array.prototype.reverse.call(o)"},
	{name: "copyWithin on an array-like", body: arrayLike + "Array.prototype.copyWithin.call(o, 0, 1)"},
	{name: "every on an array-like", body: arrayLike + "return Array.prototype.every.call(o, () => false)"},
	{name: "fill on an array-like", body: arrayLike + "Array.prototype.fill.call(o, 0)", limits: bigHeap},
	{name: "includes on globalThis", body: "globalThis.length = 2 ** 53 - 1; return Array.prototype.includes.call(globalThis, 1)"},
	{name: "includes after the code returned", body: holes + "Promise.resolve().then(() => a.includes(1)); await mcp.test.sleep({ms: 10000})"},
	{name: "busy loop ends at the CPU budget", body: "while (true) {}", message: "CPU budget",
		limits: func(l *Limits) { l.Timeout = 5 * time.Second; l.CPUBudget = 300 * time.Millisecond }},
	{name: "native loop ends at the CPU budget", body: holes + "return a.includes(1)", message: "CPU budget",
		limits: func(l *Limits) { l.Timeout = 5 * time.Second; l.CPUBudget = 300 * time.Millisecond }},
	{name: "waiting on a tool is not CPU", body: "await mcp.test.sleep({ms: 600}); return 'slept'", code: "",
		limits: func(l *Limits) { l.Timeout = 5 * time.Second; l.CPUBudget = 300 * time.Millisecond }},
	{name: "cancelled inside a built-in", body: holes + "return a.includes(1)", code: pmlerr.Cancelled, message: "cancelled", cancel: 200 * time.Millisecond,
		limits: func(l *Limits) { l.Timeout = 5 * time.Second }},
	{name: "string repeat past the heap", body: "return 'a'.repeat(2 ** 29).length", code: pmlerr.MemoryLimit, limits: slow},
	{name: "padEnd past the heap", body: "return 'a'.padEnd(2 ** 29).length", code: pmlerr.MemoryLimit, limits: slow},
	{name: "stringify holes past the heap", body: holes + "return JSON.stringify(a).length", code: pmlerr.MemoryLimit,
		limits: slowHeap(4 << 20)},
	{name: "huge dense return value", body: "return new Array(2 ** 24).fill(0)", code: pmlerr.MemoryLimit, limits: slow},
	{name: "normalize out of memory", body: "let s = 'é'.repeat(1 << 18); const keep = []; for (;;) keep.push(s.normalize('NFD') + keep.length)",
		code: pmlerr.MemoryLimit, limits: slowHeap(16 << 20)},
	{name: "localeCompare out of memory", body: "let s = 'é'.repeat(1 << 18); const keep = []; for (;;) { keep.push(s + keep.length); s.localeCompare(keep[keep.length - 1]) }",
		code: pmlerr.MemoryLimit, limits: slowHeap(16 << 20)},
	{name: "30 MB error message", body: "throw new Error('m'.repeat(" + bigMessage + "))", code: pmlerr.CodeError, message: "[truncated]", limits: slow},
	{name: "call arguments past the byte budget", body: "await Promise.all(Array.from({length: 80}, () => mcp.test.echo({s: 'x'.repeat(64 << 10)})))",
		code: pmlerr.MemoryLimit, message: "mcp.test.echo", limits: smallCallBudget},
	{name: "call results past the byte budget", body: "const s = 'x'.repeat(64 << 10); for (;;) await mcp.test.echo({s})",
		code: pmlerr.MemoryLimit, message: "mcp.test.echo", limits: smallCallBudget},
}

// TestRunawayCodeStops runs each snippet of the corpus beside a normal run
// and checks the exact outcome, that the normal run answers promptly, that
// the process spends at most 100 ms of CPU on the snippet after its answer,
// and that its memory is given back.
func TestRunawayCodeStops(t *testing.T) {
	if n := len(runawayCorpus); n < 40 {
		t.Fatalf("the corpus has %d snippets, want at least 40", n)
	}
	// Warm up: the pool of fresh VMs fills in the background after runs,
	// which is work of the process but not of any snippet.
	for range 8 {
		if _, err := Run(context.Background(), fn("return 1"), nil, nil, testLimits()); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(300 * time.Millisecond)
	baseRSS := rssBytes(t)
	for _, h := range runawayCorpus {
		t.Run(h.name, func(t *testing.T) {
			// What the process spends idle (the collector, the pool) is
			// measured first, and allowed again after the answer.
			idle := processCPU(t)
			time.Sleep(afterAnswer)
			idle = processCPU(t) - idle

			lim := Limits{MemoryBytes: 64 << 20, Timeout: 300 * time.Millisecond, RPCTimeout: 20 * time.Second}
			if h.limits != nil {
				h.limits(&lim)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if h.cancel > 0 {
				time.AfterFunc(h.cancel, cancel)
			}
			tt := &testTools{}
			type outcome struct {
				res Result
				err error
			}
			hostile := make(chan outcome, 1)
			go func() {
				res, err := Run(ctx, fn(h.body), nil, tt.call, lim)
				hostile <- outcome{res, err}
			}()

			time.Sleep(20 * time.Millisecond) // the snippet is running
			start := time.Now()
			res, err := Run(context.Background(), fn("return await mcp.math.add({a: 1, b: 2})"), nil, tt.call, testLimits())
			if err != nil || string(res.Value) != "3" {
				t.Errorf("the normal run beside it: %s, %v", res.Value, err)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("the normal run beside it took %v", d)
			}

			got := <-hostile
			want := h.code
			if want == "" && h.message != "" {
				want = pmlerr.ExecutionTimeout
			}
			if h.code == "" && h.message == "" && h.name == "waiting on a tool is not CPU" {
				if got.err != nil {
					t.Fatalf("got %v, want success", got.err)
				}
			} else {
				if want == "" {
					want = pmlerr.ExecutionTimeout
				}
				pe, ok := pmlerr.As(got.err)
				if !ok || pe.Code != want {
					t.Fatalf("got %s, %v; want %s", got.res.Value, got.err, want)
				}
				if !strings.Contains(pe.Message, h.message) {
					t.Errorf("got message %.200q, want it to contain %q", pe.Message, h.message)
				}
				if len(pe.Message) > 2*maxTextBytes {
					t.Errorf("the message is %d bytes", len(pe.Message))
				}
			}

			// Nothing of the snippet runs on after its answer.
			c0 := processCPU(t)
			time.Sleep(afterAnswer)
			if spent := processCPU(t) - c0; spent > idle+100*time.Millisecond {
				t.Errorf("the process spent %v of CPU in the %v after the answer (%v when idle before)", spent, afterAnswer, idle)
			}
			if rss := rssBytes(t); rss > baseRSS+128<<20 {
				t.Errorf("RSS is %d MiB after the run, %d MiB before the corpus", rss>>20, baseRSS>>20)
			}
		})
	}
}

// afterAnswer is how long the process's CPU is watched after an answer.
const afterAnswer = 250 * time.Millisecond

func processCPU(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
