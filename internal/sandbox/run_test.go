package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/pmlerr"
)

func TestReturnValues(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{"return await mcp.math.add({a: 1, b: 2})", "3"},
		{"return 'hé'", `"hé"`},
		{"return {a: [1, 'x', null, true], b: {c: 1.5}}", `{"a":[1,"x",null,true],"b":{"c":1.5}}`},
		{"return", "null"},
		{"return undefined", "null"},
		{"return null", "null"},
		{"return {u: undefined, n: NaN}", `{"n":null}`},
		{"return new Date(0)", `"1970-01-01T00:00:00.000Z"`},
		{"const x = {}; return {a: x, b: x}", `{"a":{},"b":{}}`}, // shared, not a cycle
		{"return {toJSON() { return 7 }}", "7"},
		{"return 1 + 1", "2"},
	} {
		if got := mustRun(t, tc.body); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.body, got, tc.want)
		}
	}
}

func TestNonAsyncFunction(t *testing.T) {
	tt := &testTools{}
	res, err := Run(context.Background(), "(function (args) { return args.n * 2 })", json.RawMessage(`{"n": 21}`), tt.call, testLimits())
	if err != nil || string(res.Value) != "42" {
		t.Fatalf("got %s, %v", res.Value, err)
	}
}

func TestArgs(t *testing.T) {
	tt := &testTools{}
	code := fn("return {param: args, global: globalThis.args, same: args === globalThis.args}")
	for _, tc := range []struct{ args, want string }{
		{`{"x": 1, "y": [true]}`, `{"param":{"x":1,"y":[true]},"global":{"x":1,"y":[true]},"same":true}`},
		{``, `{"param":{},"global":{},"same":true}`},
		{`null`, `{"param":{},"global":{},"same":true}`},
		{` {} `, `{"param":{},"global":{},"same":true}`},
	} {
		res, err := Run(context.Background(), code, json.RawMessage(tc.args), tt.call, testLimits())
		if err != nil || string(res.Value) != tc.want {
			t.Errorf("args %q: got %s, %v; want %s", tc.args, res.Value, err, tc.want)
		}
	}
	for _, bad := range []string{`[1]`, `3`, `{"a":`, `"s"`} {
		_, err := Run(context.Background(), code, json.RawMessage(bad), tt.call, testLimits())
		wantCode(t, err, pmlerr.InvalidRequest)
	}
}

func TestCallShapes(t *testing.T) {
	tt := &testTools{}
	code := fn(`
		const a = await mcp.test.echo({k: 'v', n: [1, 2]});
		const b = await mcp["test"]["echo"]({q: 1});
		const c = await mcp.test.echo();
		const d = await mcp.test.echo(null);
		const ns = mcp.test;
		const e = await ns.echo({late: true});
		return [a, b, c, d, e];`)
	res, err := Run(context.Background(), code, nil, tt.call, testLimits())
	if err != nil {
		t.Fatal(err)
	}
	if want := `[{"k":"v","n":[1,2]},{"q":1},{},{},{"late":true}]`; string(res.Value) != want {
		t.Errorf("got %s, want %s", res.Value, want)
	}
	calls := tt.recorded()
	wantArgs := []string{`{"k":"v","n":[1,2]}`, `{"q":1}`, `{}`, `{}`, `{"late":true}`}
	if len(calls) != len(wantArgs) {
		t.Fatalf("got %d calls, want %d", len(calls), len(wantArgs))
	}
	for i, c := range calls {
		if c.tool != "test:echo" || c.args != wantArgs[i] || c.seq != i {
			t.Errorf("call %d: got %+v, want test:echo %s seq %d", i, c, wantArgs[i], i)
		}
	}
}

func TestBadCallArguments(t *testing.T) {
	for _, tc := range []struct{ body, msg string }{
		{"await mcp.test.echo(5)", "mcp.test.echo: arguments must be an object"},
		{"await mcp.test.echo([1])", "mcp.test.echo: arguments must be an object"},
		{"await mcp.test.echo({f() {}})", "mcp.test.echo: arguments are not JSON-serializable: function at $.f"},
		{"await mcp.test.echo({a: {b: [1, 2n]}})", "mcp.test.echo: arguments are not JSON-serializable: BigInt at $.a.b[1]"},
		{"const o = {}; o.self = {o}; await mcp.test.echo(o)", "mcp.test.echo: arguments are not JSON-serializable: cycle at $.self.o"},
		{"await mcp.test.echo({'a b': Symbol('s')})", `mcp.test.echo: arguments are not JSON-serializable: symbol at $["a b"]`},
	} {
		_, err := runBody(t, tc.body)
		pe := wantCode(t, err, pmlerr.CodeError)
		if pe.Message != tc.msg || pe.Details["name"] != "TypeError" {
			t.Errorf("%s: got %q %v, want TypeError %q", tc.body, pe.Message, pe.Details, tc.msg)
		}
	}
	// The TypeError is catchable, and nothing was called.
	tt := &testTools{}
	res, err := Run(context.Background(), fn("try { await mcp.test.echo({f() {}}) } catch (e) { return e instanceof TypeError }"), nil, tt.call, testLimits())
	if err != nil || string(res.Value) != "true" || len(tt.recorded()) != 0 {
		t.Errorf("got %s, %v, %d calls", res.Value, err, len(tt.recorded()))
	}
}

func TestPromiseAllRunsConcurrently(t *testing.T) {
	limit := 100 * time.Millisecond
	if raceEnabled {
		limit = 500 * time.Millisecond // still half of 20 calls in a row
	}
	// Best of three: the machine running the tests may be busy.
	best := time.Hour
	for range 3 {
		start := time.Now()
		got := mustRun(t, `
			const ps = [];
			for (let i = 0; i < 20; i++) ps.push(mcp.test.sleep({ms: 50}));
			return (await Promise.all(ps)).length;`)
		if got != "20" {
			t.Fatalf("got %s", got)
		}
		best = min(best, time.Since(start))
	}
	if best >= limit {
		t.Errorf("20 concurrent 50 ms calls took %v, want under %v", best, limit)
	}
}

// TestCallsBeyondTheLimitWait issues more calls at once than may be in
// flight, with plain and non-plain arguments: the rest wait in the bridge,
// in issue order, and each gets its own result.
func TestCallsBeyondTheLimitWait(t *testing.T) {
	tt := &testTools{}
	res, err := Run(context.Background(), fn(`
		const ps = [];
		for (let i = 0; i < 3 * 64; i++) {
			const a = i % 3 === 0 ? {get i() { return i }} : {i};
			ps.push(mcp.test.echo(a));
		}
		const out = await Promise.all(ps);
		return out.every((r, i) => r.i === i);`), nil, tt.call, testLimits())
	if err != nil || string(res.Value) != "true" {
		t.Fatalf("got %s, %v", res.Value, err)
	}
	calls := tt.recorded()
	if len(calls) != 3*maxConcurrentCalls {
		t.Fatalf("got %d calls", len(calls))
	}
	for _, c := range calls {
		if want := `{"i":` + itoa(c.seq) + `}`; c.args != want {
			t.Errorf("call %d has args %s, want %s", c.seq, c.args, want)
		}
	}
}

func TestCallSeqIsIssueOrder(t *testing.T) {
	tt := &testTools{}
	// Later calls finish first; the sequence still follows the issue order.
	code := fn(`
		const ps = [];
		for (let i = 0; i < 5; i++) ps.push(mcp.test.sleep({ms: 100 - 20 * i}));
		await Promise.all(ps);
		await mcp.math.add({a: 1, b: 1});`)
	if _, err := Run(context.Background(), code, nil, tt.call, testLimits()); err != nil {
		t.Fatal(err)
	}
	calls := tt.recorded()
	want := map[int]string{0: `{"ms":100}`, 1: `{"ms":80}`, 2: `{"ms":60}`, 3: `{"ms":40}`, 4: `{"ms":20}`, 5: `{"a":1,"b":1}`}
	for _, c := range calls {
		if want[c.seq] != c.args {
			t.Errorf("call %s %s has seq %d", c.tool, c.args, c.seq)
		}
	}
	if len(calls) != 6 {
		t.Errorf("got %d calls, want 6", len(calls))
	}
}

func TestManyCallsQueueBeyondConcurrencyLimit(t *testing.T) {
	tt := &testTools{}
	code := fn(`
		const ps = [];
		for (let i = 0; i < 300; i++) ps.push(mcp.math.add({a: i, b: 0}));
		const r = await Promise.all(ps);
		return r.reduce((s, x) => s + x, 0);`)
	res, err := Run(context.Background(), code, nil, tt.call, testLimits())
	if err != nil || string(res.Value) != "44850" {
		t.Fatalf("got %s, %v", res.Value, err)
	}
	seen := map[int]bool{}
	for _, c := range tt.recorded() {
		if c.args != `{"a":`+itoa(c.seq)+`,"b":0}` || seen[c.seq] {
			t.Fatalf("call %+v is not the one issued at its position", c)
		}
		seen[c.seq] = true
	}
	if len(seen) != 300 {
		t.Errorf("got %d calls", len(seen))
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

func TestToolErrorsAreCatchable(t *testing.T) {
	got := mustRun(t, `
		const out = [];
		for (const [code, msg] of [['TOOL_ERROR', 'disk full'], ['PERMISSION_DENIED', 'nope']]) {
			try { await mcp.test.fail({code, msg}) } catch (e) {
				out.push([e instanceof Error, e.message, e.code, e.tool]);
			}
		}
		try { await mcp.test.plain({msg: 'plain go error'}) } catch (e) { out.push([e.message, e.code]) }
		try { await mcp.nope.missing({}) } catch (e) { out.push([e.code, e.tool]) }
		try { await mcp.test.panic({}) } catch (e) { out.push([e.code, e.message]) }
		const r = await Promise.allSettled([mcp.math.add({a: 1, b: 2}), mcp.test.fail({code: 'TOOL_ERROR', msg: 'x'})]);
		out.push(r.map(x => x.status));
		return out;`)
	want := `[[true,"disk full","TOOL_ERROR","test:fail"],[true,"nope","PERMISSION_DENIED","test:fail"],` +
		`["plain go error","TOOL_ERROR"],["UNKNOWN_TOOL","nope:missing"],` +
		`["TOOL_ERROR","tool test:panic failed: handler panicked: handler exploded"],["fulfilled","rejected"]]`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestUncaughtToolErrorKeepsItsCode(t *testing.T) {
	for _, tc := range []struct {
		body string
		code pmlerr.Code
		msg  string
		tool string
	}{
		{"await mcp.test.fail({code: 'PERMISSION_DENIED', msg: 'denied by policy'})", pmlerr.PermissionDenied, "denied by policy", "test:fail"},
		{"await mcp.test.plain({msg: 'boom'})", pmlerr.ToolError, "boom", "test:plain"},
		{"await mcp.nope.missing()", pmlerr.UnknownTool, "unknown tool nope:missing", "nope:missing"},
		{"try { await mcp.test.fail({code: 'TOOL_ERROR', msg: 'again'}) } catch (e) { e.code = 'X'; e.message = 'changed'; throw e }", pmlerr.ToolError, "again", "test:fail"},
	} {
		_, err := runBody(t, tc.body)
		pe := wantCode(t, err, tc.code)
		if pe.Message != tc.msg || pe.Details["tool"] != tc.tool {
			t.Errorf("%s: got %q %v", tc.body, pe.Message, pe.Details)
		}
		if pe.Err == nil {
			t.Errorf("%s: the CallFunc's error is not kept", tc.body)
		}
		// The details that fix a call reach the run's error; others do not.
		if _, declared := pe.Details["declaration"]; declared != (tc.tool == "test:fail") || pe.Details["available"] != nil {
			t.Errorf("%s: details %v", tc.body, pe.Details)
		}
	}
	// A new Error carrying a copied code is the code's own error.
	_, err := runBody(t, "try { await mcp.test.fail({code: 'PERMISSION_DENIED', msg: 'x'}) } catch (e) { const f = new Error('mine'); f.code = e.code; throw f }")
	wantCode(t, err, pmlerr.CodeError)
}

func TestNilCallFunc(t *testing.T) {
	_, err := Run(context.Background(), fn("await mcp.a.b({})"), nil, nil, testLimits())
	wantCode(t, err, pmlerr.UnknownTool)
}

func TestRPCTimeout(t *testing.T) {
	tt := &testTools{}
	lim := testLimits()
	lim.RPCTimeout = 100 * time.Millisecond
	for _, tool := range []string{"hang", "sleep"} { // ignores / honors its context
		start := time.Now()
		res, err := Run(context.Background(), fn(`
			try { await mcp.test.`+tool+`({ms: 5000}) } catch (e) { return [e.code, e.tool] }`), nil, tt.call, lim)
		if err != nil || string(res.Value) != `["RPC_TIMEOUT","test:`+tool+`"]` {
			t.Errorf("%s: got %s, %v", tool, res.Value, err)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("%s: took %v", tool, d)
		}
		_, err = Run(context.Background(), fn("await mcp.test."+tool+"({ms: 5000})"), nil, tt.call, lim)
		wantCode(t, err, pmlerr.RPCTimeout)
	}
}

func TestRunGoesOnAfterAHungCall(t *testing.T) {
	// The hung call is the only one in flight, so the VM's own goroutine
	// makes it; at the RPC timeout another goroutine takes the run over.
	tt := &testTools{}
	lim := testLimits()
	lim.RPCTimeout = 100 * time.Millisecond
	start := time.Now()
	res, err := Run(context.Background(), fn(`
		let code;
		try { await mcp.test.hang({}) } catch (e) { code = e.code }
		const [a, b] = await Promise.all([mcp.math.add({a: 1, b: 2}), mcp.math.add({a: 3, b: 4})]);
		return [code, await mcp.math.add({a, b})]`), nil, tt.call, lim)
	if err != nil || string(res.Value) != `["RPC_TIMEOUT",10]` {
		t.Fatalf("got %s, %v", res.Value, err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("took %v", d)
	}
	// A second hang in the run that took over is abandoned the same way.
	res, err = Run(context.Background(), fn(`
		const codes = [];
		for (let i = 0; i < 2; i++) { try { await mcp.test.hang({}) } catch (e) { codes.push(e.code) } }
		return codes`), nil, tt.call, lim)
	if err != nil || string(res.Value) != `["RPC_TIMEOUT","RPC_TIMEOUT"]` {
		t.Fatalf("got %s, %v", res.Value, err)
	}
}

func TestHaltStopsTheRun(t *testing.T) {
	tt := &testTools{}
	res, err := Run(context.Background(), fn(`
		try { await mcp.test.halt({}) } catch (e) { return 'caught' }
		finally { console.log('finally ran') }
		return 'after'`), nil, tt.call, testLimits())
	var halt *HaltError
	if !errors.As(err, &halt) || !errors.Is(err, errApproval) {
		t.Fatalf("got %s, %v; want the halt", res.Value, err)
	}
	if err.Error() != "pause: approval required" {
		t.Errorf("the error is not returned unchanged: %v", err)
	}
	if len(res.Logs) != 0 {
		t.Errorf("code ran after the halt: %q", res.Logs)
	}
	// A halt among concurrent calls also stops at once.
	start := time.Now()
	_, err = Run(context.Background(), fn("await Promise.all([mcp.test.sleep({ms: 1500}), mcp.test.halt({})])"), nil, tt.call, testLimits())
	if !errors.As(err, &halt) || time.Since(start) > time.Second {
		t.Errorf("got %v after %v", err, time.Since(start))
	}
}

func TestConsole(t *testing.T) {
	res, err := runBody(t, `
		console.log('plain', 1, {a: [1]}, null, undefined, true);
		console.info('i'); console.warn('w'); console.error(new TypeError('bad')); console.debug('d');
		console.log(function named() {}, Symbol('s'), 10n, [1, 'x']);
		const c = {}; c.c = c; console.log(c);
		console.log();`)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`plain 1 {"a":[1]} null undefined true`,
		`[info] i`, `[warn] w`, `[error] TypeError: bad`, `[debug] d`,
		`[Function: named] Symbol(s) 10n [1,"x"]`,
		`[object Object]`,
		``,
	}
	if strings.Join(res.Logs, "\n") != strings.Join(want, "\n") || res.LogsTruncated {
		t.Errorf("got  %q\nwant %q", res.Logs, want)
	}
}

func TestConsoleIsBounded(t *testing.T) {
	tt := &testTools{}
	lim := testLimits()
	lim.MaxLogBytes = 100
	res, err := Run(context.Background(), fn("for (let i = 0; i < 300; i++) console.log('é'.repeat(7)); return 1"), nil, tt.call, lim)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, l := range res.Logs {
		total += len(l) + 1
		if !strings.HasPrefix("ééééééé", l) {
			t.Errorf("line cut inside a character: %q", l)
		}
	}
	if !res.LogsTruncated || total > 100 || len(res.Logs) < 6 {
		t.Errorf("got %d lines, %d bytes, truncated %v", len(res.Logs), total, res.LogsTruncated)
	}
	// Empty lines count too.
	res, err = Run(context.Background(), fn("for (let i = 0; i < 300; i++) console.log(); return 1"), nil, tt.call, lim)
	if err != nil || len(res.Logs) != 100 || !res.LogsTruncated {
		t.Errorf("got %d empty lines, truncated %v, %v", len(res.Logs), res.LogsTruncated, err)
	}
}

func TestLogsSurviveFailure(t *testing.T) {
	res, err := runBody(t, "console.log('before'); throw new Error('x')")
	wantCode(t, err, pmlerr.CodeError)
	if len(res.Logs) != 1 || res.Logs[0] != "before" || res.Value != nil {
		t.Errorf("got %q %s", res.Logs, res.Value)
	}
}

func TestReturnValueErrors(t *testing.T) {
	for _, tc := range []struct{ body, msg string }{
		{"return {a: {b() {}}}", "return value is not JSON-serializable: function at $.a.b"},
		{"return () => 1", "return value is not JSON-serializable: function at $"},
		{"const a = {x: []}; a.x.push(a); return a", "return value is not JSON-serializable: cycle at $.x[0]"},
		{"return {n: 1n}", "return value is not JSON-serializable: BigInt at $.n"},
		{"return [Symbol('s')]", "return value is not JSON-serializable: symbol at $[0]"},
		{"return {toJSON() { throw new Error('mine') }}", "mine"},
	} {
		_, err := runBody(t, tc.body)
		if pe := wantCode(t, err, pmlerr.CodeError); pe.Message != tc.msg {
			t.Errorf("%s: got %q, want %q", tc.body, pe.Message, tc.msg)
		}
	}
}

func TestReturnValueTooLarge(t *testing.T) {
	tt := &testTools{}
	lim := testLimits()
	lim.MaxResultBytes = 1000
	if _, err := Run(context.Background(), fn("return 'x'.repeat(998)"), nil, tt.call, lim); err != nil {
		t.Fatalf("a result of exactly the limit: %v", err)
	}
	_, err := Run(context.Background(), fn("return 'x'.repeat(999)"), nil, tt.call, lim)
	if pe := wantCode(t, err, pmlerr.CodeError); pe.Message != "return value too large (1001 bytes, limit 1000)" {
		t.Errorf("got %q", pe.Message)
	}
}

func TestThrownValues(t *testing.T) {
	for _, tc := range []struct{ body, msg, name string }{
		{"throw 42", "42", ""},
		{"throw 'just a string'", "just a string", ""},
		{"throw {a: 1}", `{"a":1}`, ""},
		{"throw null", "null", ""},
		{"throw undefined", "undefined", ""},
		{"throw Symbol('s')", "Symbol(s)", ""},
		{"throw new RangeError('out of range')", "out of range", "RangeError"},
		{"throw new Error('')", "Error", "Error"},
		{"throw {message: 'like an error'}", "like an error", ""},
		{"throw {get message() { throw 1 }}", "[object Object]", ""},
	} {
		_, err := runBody(t, tc.body)
		pe := wantCode(t, err, pmlerr.CodeError)
		name, _ := pe.Details["name"].(string)
		if pe.Message != tc.msg || name != tc.name {
			t.Errorf("%s: got %q name %q, want %q name %q", tc.body, pe.Message, name, tc.msg, tc.name)
		}
	}
}

func TestErrorLocation(t *testing.T) {
	tt := &testTools{}
	code := "(async function (args) {\n  const x = 1;\n    null.boom;\n})"
	_, err := Run(context.Background(), code, nil, tt.call, testLimits())
	pe := wantCode(t, err, pmlerr.CodeError)
	if pe.Details["line"] != 3 || pe.Details["column"] != 9 || !strings.Contains(pe.Details["stack"].(string), "<eval>:3:9") {
		t.Errorf("got %v", pe.Details)
	}
	// An error from the bridge points at the user's call, not at the bridge.
	code = "(async function (args) {\n\n  await mcp.a.b(7);\n})"
	_, err = Run(context.Background(), code, nil, tt.call, testLimits())
	pe = wantCode(t, err, pmlerr.CodeError)
	if pe.Details["line"] != 3 || strings.Contains(pe.Details["stack"].(string), "pml$") {
		t.Errorf("got %v", pe.Details)
	}
}

func TestSyntaxError(t *testing.T) {
	tt := &testTools{}
	for range 2 { // the second time is not served from the compiled-code cache
		_, err := Run(context.Background(), "(async function (args) {\n  return 1 +;\n})", nil, tt.call, testLimits())
		pe := wantCode(t, err, pmlerr.SyntaxError)
		if pe.Details["line"] != 2 || pe.Details["column"] == nil {
			t.Errorf("got %q %v", pe.Message, pe.Details)
		}
	}
}

func TestCompiledCodeIsReusedAcrossRuns(t *testing.T) {
	js := fn("globalThis.n = (globalThis.n ?? 0) + 1; return [n, args.x]")
	for i := range 3 {
		res, err := Run(context.Background(), js, json.RawMessage(fmt.Sprintf(`{"x":%d}`, i)), nil, testLimits())
		if err != nil || string(res.Value) != fmt.Sprintf("[1,%d]", i) {
			t.Fatalf("run %d: got %s, %v; want a fresh realm with its own args", i, res.Value, err)
		}
	}
	if _, ok := compiled.Get(js); !ok {
		t.Error("the code's bytecode is not cached")
	}
}

func TestNotAFunction(t *testing.T) {
	tt := &testTools{}
	_, err := Run(context.Background(), "42", nil, tt.call, testLimits())
	if pe := wantCode(t, err, pmlerr.CodeError); !strings.Contains(pe.Message, "must be a function expression") {
		t.Errorf("got %q", pe.Message)
	}
}

func TestTimeoutWhileComputing(t *testing.T) {
	tt := &testTools{}
	lim := testLimits()
	lim.Timeout = 200 * time.Millisecond
	start := time.Now()
	_, err := Run(context.Background(), fn("while (true) {}"), nil, tt.call, lim)
	pe := wantCode(t, err, pmlerr.ExecutionTimeout)
	if !errors.Is(pe, context.DeadlineExceeded) {
		t.Errorf("Err is %v", pe.Err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("took %v", d)
	}
}

func TestCancelWhileWaitingOnTool(t *testing.T) {
	tt := &testTools{}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, err := Run(ctx, fn("await mcp.test.sleep({ms: 5000})"), nil, tt.call, testLimits())
	pe := wantCode(t, err, pmlerr.Cancelled)
	if !errors.Is(pe, context.Canceled) || time.Since(start) > time.Second {
		t.Errorf("got %v after %v", pe.Err, time.Since(start))
	}
	// Already cancelled.
	_, err = Run(ctx, fn("return 1"), nil, tt.call, testLimits())
	wantCode(t, err, pmlerr.Cancelled)
}

func TestPromiseThatNeverSettlesFailsAtOnce(t *testing.T) {
	start := time.Now()
	_, err := runBody(t, "await new Promise(() => {})")
	wantCode(t, err, pmlerr.ExecutionTimeout)
	if d := time.Since(start); d > time.Second {
		t.Errorf("took %v", d)
	}
}

func TestDetachedWorkDoesNotOutliveTheResult(t *testing.T) {
	start := time.Now()
	got := mustRun(t, "(async () => { for (;;) await null })(); mcp.test.sleep({ms: 5000}); return 'done'")
	if got != `"done"` || time.Since(start) > time.Second {
		t.Errorf("got %s after %v", got, time.Since(start))
	}
}

func TestTimeoutDefaultsAndCap(t *testing.T) {
	if l := (Limits{}).withDefaults(); l != DefaultLimits() {
		t.Errorf("zero limits: got %+v", l)
	}
	if l := (Limits{Timeout: time.Hour}).withDefaults(); l.Timeout != MaxTimeout {
		t.Errorf("timeout not capped: %v", l.Timeout)
	}
}

func TestMemoryLimit(t *testing.T) {
	for _, body := range []string{
		"const a = []; for (;;) a.push({x: a.length})", // small objects: the engine throws null
		"const a = []; for (let n = 1; ; n *= 2) a.push('x'.repeat(n))",
		"try { const a = []; for (;;) a.push([a.length]) } catch (e) { throw e }",
	} {
		tt := &testTools{}
		lim := testLimits()
		lim.MemoryBytes = 2 << 20
		res, err := Run(context.Background(), fn(body), nil, tt.call, lim)
		wantCode(t, err, pmlerr.MemoryLimit)
		if res.MemoryBytes <= 0 || res.MemoryBytes > 2<<20 {
			t.Errorf("MemoryBytes %d", res.MemoryBytes)
		}
	}
	// Code that recovers from running out of memory may go on.
	got := mustRun(t, "try { const a = []; for (;;) a.push('y'.repeat(1 << 16)) } catch (e) { return 'recovered' }")
	if got != `"recovered"` {
		t.Errorf("got %s", got)
	}
	// throw null without memory trouble stays a CODE_ERROR.
	_, err := runBody(t, "throw null")
	wantCode(t, err, pmlerr.CodeError)
}

func TestMemoryBytesReported(t *testing.T) {
	small, err := runBody(t, "return 1")
	if err != nil {
		t.Fatal(err)
	}
	big, err := runBody(t, "globalThis.keep = 'z'.repeat(1 << 18); return 1")
	if err != nil {
		t.Fatal(err)
	}
	if small.MemoryBytes <= 0 || big.MemoryBytes < small.MemoryBytes+1<<18 {
		t.Errorf("small %d, big %d", small.MemoryBytes, big.MemoryBytes)
	}
}

func TestDeepRecursion(t *testing.T) {
	_, err := runBody(t, "function f(n) { return f(n + 1) + 1 } return f(0)")
	if pe := wantCode(t, err, pmlerr.CodeError); pe.Message != "Maximum call stack size exceeded" {
		t.Errorf("got %q", pe.Message)
	}
	// Legitimate recursion a thousand deep works.
	if got := mustRun(t, "function f(n) { return n === 0 ? 0 : 1 + f(n - 1) } return f(1000)"); got != "1000" {
		t.Errorf("got %s", got)
	}
}

// Namespaces made in one run share their makings' parts (the bridge's
// lazyObject) but nothing a run sees: each holds the tools read from it, as
// non-writable, non-configurable properties, and reading one tool makes no
// other namespace's.
func TestNamespacesKeepTheirOwnTools(t *testing.T) {
	got := mustRun(t, `
		const a = mcp.alpha, b = mcp.beta, f = a.one, g = b.two;
		const d = Object.getOwnPropertyDescriptor(a, 'one'), n = Object.getOwnPropertyDescriptor(mcp, 'alpha');
		return [a === mcp.alpha, a !== b, f === mcp.alpha.one, f !== g, Object.keys(mcp).join(), Object.keys(a).join(),
			Object.keys(b).join(), 'two' in a, 'one' in b, d.writable, d.configurable, n.writable, n.configurable,
			typeof f, Object.getPrototypeOf(a)];`)
	want := `[true,true,true,true,"alpha,beta","one","two",false,false,false,false,false,false,"function",null]`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestMCPCannotBeReplaced(t *testing.T) {
	got := mustRun(t, `
		'use strict';
		const before = mcp, ns = mcp.math, out = [];
		const attempt = (f) => { try { f(); out.push('allowed') } catch (e) { out.push(e.constructor.name) } };
		attempt(() => { globalThis.mcp = 1 });
		attempt(() => { delete globalThis.mcp });
		attempt(() => Object.defineProperty(globalThis, 'mcp', {value: {}}));
		attempt(() => { mcp.math = 1 });
		attempt(() => { delete mcp.math });
		attempt(() => { mcp.math.add = 1 });
		attempt(() => Object.defineProperty(mcp.math, 'add', {value: 1}));
		attempt(() => Object.setPrototypeOf(mcp, {}));
		const d = Object.getOwnPropertyDescriptor(globalThis, 'mcp');
		out.push(mcp === before, mcp.math === ns, d.configurable, d.set === undefined, Reflect.defineProperty(globalThis, 'mcp', {value: 1}));
		out.push(typeof mcp.math.then, typeof mcp.toString, typeof mcp.math.constructor, typeof mcp[Symbol.iterator]);
		return out;`)
	want := `["TypeError","TypeError","TypeError","TypeError","TypeError","TypeError","TypeError","TypeError",true,true,false,true,false,` +
		`"undefined","undefined","undefined","undefined"]`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestTimeoutHoldsDuringLongBuiltIn(t *testing.T) {
	tt := &testTools{}
	lim := testLimits()
	lim.MemoryBytes = 64 << 20
	lim.Timeout = 100 * time.Millisecond
	base := runtime.NumGoroutine() - vmGoroutines.Idle()
	start := time.Now()
	// One replaceAll over 16 MiB takes longer than the timeout and cannot
	// be interrupted.
	size := 23
	if raceEnabled {
		size = 17 // the race detector slows built-ins a hundredfold
	}
	_, err := Run(context.Background(), fn("const s = 'ab'.repeat(1 << "+itoa(size)+"); return s.replaceAll('a', 'cc').length"), nil, tt.call, lim)
	wantCode(t, err, pmlerr.ExecutionTimeout)
	if d := time.Since(start); d > lim.Timeout+timeoutGrace+100*time.Millisecond {
		t.Errorf("Run answered after %v", d)
	}
	// The abandoned VM stops once replaceAll returns.
	if g := waitGoroutines(t, base+1); g > base+1 {
		t.Errorf("goroutines: %d before, %d after", base, g)
	}
}

func TestKeptToolErrorsAreBounded(t *testing.T) {
	var k toolErrors
	for id := range 3 * maxKeptToolErrors {
		k.keep(id, errors.New(itoa(id)))
	}
	if len(k.byID) != maxKeptToolErrors || k.get(0) != nil || k.get(3*maxKeptToolErrors-1) == nil || k.get(2*maxKeptToolErrors) == nil {
		t.Errorf("kept %d errors", len(k.byID))
	}
	// A failure after many caught ones still carries its Go error. Under
	// -race the engine is tens of times slower, so the run gets more time.
	lim := testLimits()
	lim.Timeout = 2 * time.Minute
	tt := &testTools{}
	_, err := Run(context.Background(), fn(`
		for (let i = 0; i < 1500; i++) { try { await mcp.test.plain({msg: 'x'}) } catch (e) {} }
		await mcp.test.plain({msg: 'last'})`), nil, tt.call, lim)
	if pe := wantCode(t, err, pmlerr.ToolError); pe.Message != "last" || pe.Err == nil {
		t.Errorf("got %q, Err %v", pe.Message, pe.Err)
	}
}

// Machines are copies of the machine template (docs/performance.md "VM
// templates"): an engine change that makes its heap uncopyable must fail
// here rather than quietly build every VM again.
func TestMachineTemplateBuilds(t *testing.T) {
	if _, err := machineTemplate(); err != nil {
		t.Fatal(err)
	}
}

// An engine operation that fails once the run is past its deadline failed
// because the deadline's interrupt stopped it: the run timed out, which is
// not a sandbox failure (an execution looping on calls until its deadline
// was once answered INTERNAL_ERROR "cannot create a promise").
func TestEngineFailureAtTheDeadlineIsATimeout(t *testing.T) {
	m, err := newMachine(DefaultLimits().MemoryBytes)
	if err != nil {
		t.Fatal(err)
	}
	defer m.close()
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Millisecond))
	defer cancel()
	lim := testLimits().withDefaults()
	r := &run{parent: context.Background(), ctx: ctx, started: time.Now().Add(-time.Second), lim: lim, m: m}
	wantCode(t, r.engineFailure("create a promise"), pmlerr.ExecutionTimeout)
	r.ctx = context.Background()
	wantCode(t, r.engineFailure("create a promise"), pmlerr.Internal)
}
