package sandbox

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/pmlerr"
)

// hostile is one snippet of the corpus. Tampering snippets end by calling a
// tool that fails with PERMISSION_DENIED after checking that a normal call
// still returns 3: that exact code proves the bridge still works both ways.
type hostile struct {
	name    string
	body    string // function body; js overrides it
	js      string
	code    pmlerr.Code
	limits  func(*Limits)
	ctx     func() (context.Context, context.CancelFunc)
	message string // substring the error message must contain, if set
}

const stillWorks = `
	const r = await mcp.math.add({a: 1, b: 2});
	if (r !== 3) throw new Error('bridge broken: ' + r);
	await mcp.test.fail({code: 'PERMISSION_DENIED', msg: 'still works'});`

func shortTimeout(l *Limits) { l.Timeout = 300 * time.Millisecond }

// smallHeap keeps memory bombs cheap: the engine is slow to fill a heap under
// the race detector.
func smallHeap(l *Limits) { l.MemoryBytes = 2 << 20 }

var hostileCorpus = []hostile{
	// CPU
	{name: "sync infinite loop", body: "while (true) {}", code: pmlerr.ExecutionTimeout, limits: shortTimeout},
	{name: "loop in nested function", body: "const f = () => { for (;;) {} }; [1].map(f)", code: pmlerr.ExecutionTimeout, limits: shortTimeout},
	{name: "loop in finally", body: "try { while (true) {} } finally { while (true) {} }", code: pmlerr.ExecutionTimeout, limits: shortTimeout},
	{name: "async microtask loop", body: "for (;;) await null", code: pmlerr.ExecutionTimeout, limits: shortTimeout},
	{name: "detached promise chain", body: "const f = () => Promise.resolve().then(f); f(); await mcp.test.sleep({ms: 5000})", code: pmlerr.ExecutionTimeout, limits: shortTimeout},
	{name: "catastrophic regexp", body: "return /(a+)+$/.test('a'.repeat(40) + 'b')", code: pmlerr.ExecutionTimeout, limits: shortTimeout},
	{name: "sort comparator loops", body: "[3, 2, 1].sort(() => { for (;;) {} })", code: pmlerr.ExecutionTimeout, limits: shortTimeout},
	{name: "getter in return value loops", body: "return {get x() { for (;;) {} }}", code: pmlerr.ExecutionTimeout, limits: shortTimeout},
	{name: "promise that never settles", body: "await new Promise(() => {})", code: pmlerr.ExecutionTimeout},
	{name: "call bomb", body: "for (let i = 0; i < 2000; i++) mcp.test.sleep({ms: 10000}); await new Promise(() => {})", code: pmlerr.ExecutionTimeout, limits: shortTimeout},
	{
		name: "caller cancels while computing", body: "for (;;) {}", code: pmlerr.Cancelled, message: "cancelled by the caller",
		ctx: func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(100*time.Millisecond, cancel)
			return ctx, cancel
		},
	},
	{
		name: "ctx deadline while computing", body: "for (;;) {}", code: pmlerr.ExecutionTimeout,
		ctx: func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 200*time.Millisecond)
		},
	},
	{
		name: "ctx cancelled while waiting on a tool", body: "await mcp.test.sleep({ms: 10000})", code: pmlerr.Cancelled,
		ctx: func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(100*time.Millisecond, cancel)
			return ctx, cancel
		},
	},

	// Memory
	{name: "array of objects", body: "const a = []; for (;;) a.push({i: a.length})", code: pmlerr.MemoryLimit, limits: smallHeap},
	{name: "strings doubling, flat", body: "const keep = []; for (let n = 1; ; n *= 2) keep.push('x'.repeat(n))", code: pmlerr.MemoryLimit, limits: smallHeap},
	{name: "strings doubling, ropes", body: "let s = 'x'; for (;;) s += s", code: pmlerr.CodeError, message: "string too long"},
	{name: "map bomb", body: "const m = new Map(); for (let i = 0; ; i++) m.set(i, [i])", code: pmlerr.MemoryLimit, limits: smallHeap},
	{name: "huge ArrayBuffer", body: "return new ArrayBuffer(1 << 30).byteLength", code: pmlerr.MemoryLimit},
	{name: "typed arrays", body: "const a = []; for (;;) a.push(new Float64Array(1 << 14))", code: pmlerr.MemoryLimit, limits: smallHeap},
	{name: "queued call arguments", body: "const big = 'x'.repeat(1 << 13), ps = []; for (let i = 0; i < 200; i++) ps.push(mcp.test.hang({big})); await Promise.all(ps)",
		code: pmlerr.MemoryLimit, limits: func(l *Limits) { l.MemoryBytes = 1 << 20 }},
	{name: "long built-in call past the deadline", body: "const s = 'ab'.repeat(1 << 20); for (;;) s.replaceAll('a', 'cc')", code: pmlerr.ExecutionTimeout,
		limits: func(l *Limits) { l.Timeout, l.MemoryBytes = 300*time.Millisecond, 64<<20 }},

	// Stack
	{name: "deep recursion", body: "const f = n => f(n + 1) + 1; return f(0)", code: pmlerr.CodeError, message: "Maximum call stack size exceeded"},
	{name: "recursive proxy getter", body: "const p = new Proxy({}, {get(t, k, r) { return r[k] }}); return p.x", code: pmlerr.CodeError},
	{name: "recursive toString", body: "const o = {toString() { return String(this) }}; return String(o)", code: pmlerr.CodeError},
	{name: "deep JSON.parse", body: "return JSON.parse('['.repeat(1e5))", code: pmlerr.CodeError},
	{name: "deep tool result", body: "return await mcp.test.raw({json: '['.repeat(5000) + ']'.repeat(5000)})", code: pmlerr.CodeError},

	// Tampering with the bridge and the built-ins it uses
	{name: "reassign and delete mcp", body: `
		globalThis.mcp = null; mcp = 1; delete globalThis.mcp; mcp.math = null; delete mcp.math; mcp.math.add = null;
		try { Object.defineProperty(globalThis, 'mcp', {value: {}}) } catch (e) {}
		try { Reflect.defineProperty(globalThis, 'mcp', {value: {}}) } catch (e) {}
		try { Object.defineProperty(globalThis, 'mcp', {get() { return {} }}) } catch (e) {}
		try { Object.setPrototypeOf(mcp, {}) } catch (e) {}
		try { Object.defineProperty(mcp.math, 'add', {value: () => 4}) } catch (e) {}` + stillWorks, code: pmlerr.PermissionDenied},
	{name: "Object.prototype pollution", body: `
		Object.prototype.then = function (resolve) { resolve(666) };
		Object.prototype.get = function () { throw new Error('descriptor getter') };
		Object.prototype.set = function () {};
		Object.defineProperty(Object.prototype, 'code', {set() { throw new Error('setter') }, get() { return 'TOOL_ERROR' }});
		Object.prototype.message = 'forged';
		Object.prototype.ownKeys = () => { throw new Error('trap') };
		delete Object.prototype.then;` + stillWorks, code: pmlerr.PermissionDenied},
	{name: "toJSON pollution turns arguments into a string", body: "Object.prototype.toJSON = () => 'hacked'; await mcp.math.add({a: 1, b: 2})",
		code: pmlerr.CodeError, message: "arguments must serialize to a JSON object"},
	{name: "Promise tampering", body: `
		Promise.prototype.then = () => { throw new Error('then') };
		Promise.prototype.catch = null; Promise.resolve = null; Promise.reject = null;
		const P = Promise; globalThis.Promise = function () { throw new Error('ctor') };
		const r = await mcp.math.add({a: 1, b: 2});
		if (r !== 3) throw new Error('bridge broken');
		await mcp.test.fail({code: 'PERMISSION_DENIED', msg: 'still works'});`, code: pmlerr.PermissionDenied},
	{name: "JSON tampering", body: `
		JSON.stringify = () => '"hacked"'; JSON.parse = () => 666;` + stillWorks, code: pmlerr.PermissionDenied},
	{name: "Function tampering", body: `
		Function.prototype.call = null; Function.prototype.apply = null; Function.prototype.bind = null;
		Function.prototype.toString = () => { throw 1 };` + stillWorks, code: pmlerr.PermissionDenied},
	{name: "collections and Array tampering", body: `
		WeakMap.prototype.get = () => ({code: 'UNKNOWN_TOOL', message: 'forged'}); WeakMap.prototype.set = null;
		Map.prototype.get = null; Map.prototype.set = null; Array.isArray = () => true; Array.prototype.push = null;
		String.prototype.charCodeAt = null; RegExp.prototype.exec = () => null; Symbol.prototype.toString = null;` + stillWorks, code: pmlerr.PermissionDenied},
	{name: "Error tampering", body: `
		const E = Error; globalThis.Error = function () { return {code: 'UNKNOWN_TOOL'} };
		E.prototype.name = 'X'; Object.defineProperty(E.prototype, 'message', {get() { throw 1 }});` + stillWorks, code: pmlerr.PermissionDenied},
	{name: "console tampering", body: "console.log = null; globalThis.console = 1;" + stillWorks, code: pmlerr.PermissionDenied},
	{name: "forged tool error", body: "const e = new Error('x'); e.code = 'PERMISSION_DENIED'; e.tool = 'a:b'; throw e", code: pmlerr.CodeError},

	// Escape attempts
	{name: "constructor.constructor", body: "const g = (function () {}).constructor('return this')(); return g.process.exit(1)", code: pmlerr.CodeError},
	{name: "Function returns the host function", body: "return Function('return this')().__pml_host(1, 'math:add', '{}')", code: pmlerr.CodeError},
	{name: "eval reaches the host function", body: "return eval('__pml_host')", code: pmlerr.CodeError},
	{name: "require", body: "return require('fs').readFileSync('/etc/passwd')", code: pmlerr.CodeError},
	{name: "dynamic import", body: "return await import('os')", code: pmlerr.CodeError},
	{name: "std and os", body: "return std.open('/etc/passwd', 'r') || os.exec(['id'])", code: pmlerr.CodeError},
	{name: "timers", body: "setTimeout(() => {}, 1)", code: pmlerr.CodeError},
	{name: "Atomics.wait", body: "Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0)", code: pmlerr.CodeError},
	{name: "async generator constructor", body: "const AG = (async function* () {}).constructor; return await AG('yield this')().next()", code: pmlerr.CodeError},

	// Output
	{name: "huge return value", body: "return 'x'.repeat(1 << 16)", code: pmlerr.CodeError, message: "return value too large",
		limits: func(l *Limits) { l.MaxResultBytes = 1 << 10 }},
	{name: "return value with a function", body: "return {a: {b: () => 1}}", code: pmlerr.CodeError, message: "function at $.a.b"},
	{name: "throw 42", body: "throw 42", code: pmlerr.CodeError, message: "42"},
	{name: "throw object", body: "throw {a: 1}", code: pmlerr.CodeError, message: `{"a":1}`},
	{name: "throw null", body: "throw null", code: pmlerr.CodeError, message: "null"},
	{name: "throw undefined", body: "throw undefined", code: pmlerr.CodeError, message: "undefined"},

	// Arguments: what is not plain data is left to JSON.stringify in the
	// bridge, with its semantics
	{name: "argument getter throws", body: "await mcp.math.add({get a() { throw new Error('getter ran') }, b: 2})", code: pmlerr.CodeError, message: "getter ran"},
	{name: "proxy arguments with a throwing trap", body: "await mcp.math.add(new Proxy({a: 1}, {ownKeys() { throw new Error('trap ran') }}))", code: pmlerr.CodeError, message: "trap ran"},
	{name: "hole read through a tampered Array.prototype", body: `
		Object.defineProperty(Array.prototype, 0, {
			get() { throw new Error('prototype index') },
			set(v) { Object.defineProperty(this, 0, {value: v, writable: true, enumerable: true, configurable: true}) },
		});
		await mcp.test.echo({h: [, 2]})`, code: pmlerr.CodeError, message: "prototype index"},

	// Handlers
	{name: "handler panics", body: "await mcp.test.panic({})", code: pmlerr.ToolError, message: "panicked"},
	{name: "handler hangs", body: "await mcp.test.hang({})", code: pmlerr.RPCTimeout, limits: func(l *Limits) { l.RPCTimeout = 100 * time.Millisecond }},
}

func TestHostileCorpus(t *testing.T) {
	if n := len(hostileCorpus); n < 30 {
		t.Fatalf("the corpus has %d snippets, want at least 30", n)
	}
	for _, h := range hostileCorpus {
		t.Run(h.name, func(t *testing.T) {
			t.Parallel()
			tt := &testTools{}
			normal := make(chan error, 1)
			go func() {
				res, err := Run(context.Background(), fn("return await mcp.math.add({a: 1, b: 2})"), nil, tt.call, testLimits())
				if err == nil && string(res.Value) != "3" {
					err = pmlerr.New(pmlerr.Internal, "normal run returned %s", res.Value)
				}
				normal <- err
			}()

			lim := testLimits()
			if h.limits != nil {
				h.limits(&lim)
			}
			ctx, cancel := context.Background(), context.CancelFunc(func() {})
			if h.ctx != nil {
				ctx, cancel = h.ctx()
			}
			defer cancel()
			js := h.js
			if js == "" {
				js = fn(h.body)
			}
			res, err := Run(ctx, js, nil, tt.call, lim)
			pe, ok := pmlerr.As(err)
			if !ok || pe.Code != h.code {
				t.Errorf("got %s, %v; want %s", res.Value, err, h.code)
			} else if !strings.Contains(pe.Message, h.message) {
				t.Errorf("got message %q, want it to contain %q", pe.Message, h.message)
			}
			if err := <-normal; err != nil {
				t.Errorf("the normal run beside it failed: %v", err)
			}
		})
	}
}

// TestDeadlineWinsOverTheBridgesOwnErrors: past the deadline the interrupt
// fires at every poll, also while the bridge handles what the code threw,
// which then reported errors of its own making ("not a function") about one
// run in six. The outcome is the limit the run reached.
func TestDeadlineWinsOverTheBridgesOwnErrors(t *testing.T) {
	for i := range 40 {
		_, err := Run(context.Background(), fn("for (;;) await null"), nil, nil, Limits{Timeout: 60 * time.Millisecond})
		if pe, ok := pmlerr.As(err); !ok || pe.Code != pmlerr.ExecutionTimeout {
			t.Fatalf("run %d: %v", i, err)
		}
	}
}
