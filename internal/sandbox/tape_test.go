package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/pmlerr"
)

// memTape is a Tape in memory, as the approval journal keeps one.
type memTape struct {
	mu      sync.Mutex
	values  json.RawMessage
	records int
}

func (m *memTape) Values() json.RawMessage {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.values
}

func (m *memTape) Record(v json.RawMessage) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.values = append(json.RawMessage(nil), v...)
	m.records++
}

func (m *memTape) tape(t *testing.T) tapeValues {
	t.Helper()
	var v tapeValues
	if err := json.Unmarshal(m.Values(), &v); err != nil {
		t.Fatalf("tape %s: %v", m.Values(), err)
	}
	return v
}

// runTaped runs body with tape and returns the arguments of its test:echo
// calls, in the order the code issued them (calls in flight together end in
// any order), and the run's error.
func runTaped(t *testing.T, tape *memTape, body string) ([]string, error) {
	t.Helper()
	tt := &testTools{}
	_, err := Run(WithTape(context.Background(), tape), fn(body), nil, tt.call, testLimits())
	calls := tt.recorded()
	sort.Slice(calls, func(i, j int) bool { return calls[i].seq < calls[j].seq })
	var echoed []string
	for _, c := range calls {
		if c.tool == "test:echo" {
			echoed = append(echoed, c.args)
		}
	}
	return echoed, err
}

func wantHalt(t *testing.T, err error) {
	t.Helper()
	var h *HaltError
	if !errors.As(err, &h) {
		t.Fatalf("want a halt, got %v", err)
	}
}

// Every read of the clock and of Math.random, however the code reaches
// them, repeats on a re-run with the tape the paused run recorded.
func TestTapeReplaysTimeAndRandomness(t *testing.T) {
	body := `
		const reads = () => [Date.now(), new Date().getTime(), Date(), Math.random(), globalThis.Date.now(),
			new (new Date(0).constructor)().getTime(), Reflect.construct(Date, []).getTime(), Math.random()];
		await mcp.test.echo({first: reads()});
		await Promise.all([mcp.test.echo({second: reads()}), mcp.test.echo({third: reads()})]);
		await mcp.test.halt({});`
	tape := &memTape{}
	first, err := runTaped(t, tape, body)
	wantHalt(t, err)
	if tape.records != 1 {
		t.Fatalf("records %d", tape.records)
	}
	if v := tape.tape(t); len(v.Now) != 18 || len(v.Random) != 6 {
		t.Fatalf("tape holds %d clock and %d random values, want 18 and 6", len(v.Now), len(v.Random))
	}
	time.Sleep(5 * time.Millisecond) // the real clock moves on
	second, err := runTaped(t, tape, body)
	wantHalt(t, err)
	if strings.Join(first, "|") != strings.Join(second, "|") || len(first) != 3 {
		t.Fatalf("re-run read other values:\n%s\n%s", first, second)
	}
	// Without the tape the values are fresh.
	third, err := runTaped(t, &memTape{}, body)
	wantHalt(t, err)
	if third[0] == first[0] {
		t.Fatalf("a run without the tape read the recorded values: %s", third[0])
	}
}

// A re-run that reads more than the paused run did gets the recorded values
// first, then real ones, and the tape it leaves holds both.
func TestTapeGoesOnPastTheRecord(t *testing.T) {
	tape := &memTape{}
	_, err := runTaped(t, tape, `await mcp.test.echo({r: [Math.random(), Date.now()]}); await mcp.test.halt({});`)
	wantHalt(t, err)
	rec := tape.tape(t)
	echoed, err := runTaped(t, tape, `await mcp.test.echo({r: [Math.random(), Math.random(), Date.now()]}); await mcp.test.halt({});`)
	wantHalt(t, err)
	var got struct{ R []float64 }
	if err := json.Unmarshal([]byte(echoed[0]), &got); err != nil {
		t.Fatal(err)
	}
	if got.R[0] != rec.Random[0] || got.R[2] != rec.Now[0] || got.R[1] == rec.Random[0] {
		t.Fatalf("read %v from tape %v", got.R, rec)
	}
	if v := tape.tape(t); len(v.Random) != 2 || v.Random[1] != got.R[1] {
		t.Fatalf("tape after the re-run %v, read %v", v, got.R)
	}
}

// The tape keeps at most maxTapeValues values per source; reads beyond it
// are real and not kept, so a busy loop on the clock stays bounded.
func TestTapeIsBounded(t *testing.T) {
	tape := &memTape{}
	_, err := runTaped(t, tape, `for (let i = 0; i < 70000; i++) Date.now(); await mcp.test.halt({});`)
	wantHalt(t, err)
	if v := tape.tape(t); len(v.Now) != maxTapeValues || len(v.Random) != 0 {
		t.Fatalf("tape holds %d clock and %d random values", len(v.Now), len(v.Random))
	}
}

// The tape is recorded when a run ends early (a pause, an error, its
// deadline while it waited for an approval), which may be run again; a run
// that succeeds does not touch it.
func TestTapeRecordedWhenARunEndsEarly(t *testing.T) {
	tape := &memTape{}
	if _, err := runTaped(t, tape, `return [Date.now(), Math.random()]`); err != nil {
		t.Fatal(err)
	}
	if tape.records != 0 {
		t.Fatalf("a finished run recorded %d times", tape.records)
	}
	_, err := runTaped(t, tape, `Date.now(); await mcp.test.fail({code: "TOOL_ERROR", msg: "x"})`)
	wantCode(t, err, pmlerr.ToolError)
	if v := tape.tape(t); tape.records != 1 || len(v.Now) != 1 {
		t.Fatalf("records %d, tape %v", tape.records, v)
	}
}

// A damaged record is refused before any code runs, and the next run works.
func TestTapeDamagedRecord(t *testing.T) {
	for _, bad := range []string{`{"now": "x"}`, `[1,2]`, `{"now": [1e999]}`, `{"random": [` + strings.Repeat("0,", maxTapeValues) + `0]}`} {
		echoed, err := runTaped(t, &memTape{values: json.RawMessage(bad)}, `await mcp.test.echo({}); return 1`)
		wantCode(t, err, pmlerr.Internal)
		if len(echoed) != 0 {
			t.Fatalf("%s: code ran", bad)
		}
	}
	if got := mustRun(t, `return typeof Date.now()`); got != `"number"` {
		t.Fatal(got)
	}
}

// Date behaves as the built-in it wraps, with or without a tape.
func TestDateStaysTheBuiltin(t *testing.T) {
	body := `
		class D extends Date {}
		const d = new D(), x = new Date(86400000);
		return [new Date(0).getTime(), new Date(2020, 0, 2).getFullYear(), Date.UTC(2020, 0, 1), Date.parse("1970-01-02T00:00:00Z"),
			x instanceof Date, d instanceof D, d instanceof Date, Date.prototype.constructor === Date, Date.name, Date.length,
			Date.now.name, Math.random.name, typeof Date(), Math.abs(new Date().getTime() - Date.now()) < 60000,
			isNaN(new Date(undefined).getTime()), Object.getPrototypeOf(x) === Date.prototype, Math.random() < 1];`
	want := `[0,2020,1577836800000,86400000,true,true,true,true,"Date",7,"now","random","string",true,true,true,true]`
	if got := mustRun(t, body); got != want {
		t.Fatalf("without a tape: %s", got)
	}
	tt := &testTools{}
	res, err := Run(WithTape(context.Background(), &memTape{}), fn(body), nil, tt.call, testLimits())
	if err != nil || string(res.Value) != want {
		t.Fatalf("with a tape: %s %v", res.Value, err)
	}
}

// Every machine reads the clock and randomness through Go, installed once
// in the template: a run that replaces them changes only its own machine,
// and a run that reads the clock in a loop, without a tape, is still
// stopped at its deadline, and the next run is served.
func TestClockInstalledOnceStaysPerRun(t *testing.T) {
	tamper := `Date.now = () => 0; Math.random = () => 0.5; Date.prototype.constructor = null;
		globalThis.Date = function () { return "forged"; }; return Date()`
	if got := mustRun(t, tamper); got != `"forged"` {
		t.Fatalf("the tampering run: %s", got)
	}
	check := `return [Date.now() > 1e12, Math.random() !== 0.5, Date.prototype.constructor === Date, typeof Date(), Date.now.name]`
	if got, want := mustRun(t, check), `[true,true,true,"string","now"]`; got != want {
		t.Fatalf("the next run sees %s, want %s", got, want)
	}
	tt := &testTools{}
	lim := testLimits()
	lim.Timeout = 200 * time.Millisecond
	start := time.Now()
	_, err := Run(context.Background(), fn(`for (;;) { Date.now(); Math.random(); new Date(); }`), nil, tt.call, lim)
	wantCode(t, err, pmlerr.ExecutionTimeout)
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("a clock loop ran %v past a 200 ms limit", d)
	}
	if got, want := mustRun(t, check), `[true,true,true,"string","now"]`; got != want {
		t.Fatalf("after the loop: %s", got)
	}
}
