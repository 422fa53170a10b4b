// Package sandbox runs untrusted JavaScript (the user's TypeScript after
// internal/analysis stripped it) in an embedded QuickJS engine
// (modernc.org/libquickjs, pure Go) whose only exit is the mcp.* bridge.
//
// # What the code sees
//
// Run takes the source of a parenthesized function expression with one
// parameter, as internal/analysis emits it:
//
//	(async function (args) {
//	  const r = await mcp.math.add({a: 1, b: 2});
//	  return r;
//	})
//
// Each Run gets a fresh VM (its own engine runtime), which is closed after.
// The compiled bytecode of the code is cached by its source (1024 entries,
// 32 MiB) and shared between runs: loading it is four times faster than
// compiling, and clients send the same code again and again.
// The globals are the ECMAScript built-ins (ES2023; no Intl) plus:
//
//   - args: the arguments object, also passed as the function's parameter.
//   - mcp: the only way out. mcp.ns.action(a) and mcp["ns"]["action"](a)
//     call tool "ns:action" with the JSON of a and return a Promise of the
//     tool's JSON result. a must be a plain object; undefined or null
//     means {}. Arguments JSON cannot hold (a function, symbol, BigInt or
//     cycle anywhere in them) reject with a TypeError naming the path, e.g.
//     "mcp.fs.write: arguments are not JSON-serializable: function at $.cb".
//     mcp and its namespaces cannot be assigned, redefined or deleted. The
//     names "then" and those of Object.prototype ("toString", "constructor",
//     …) are not tools, so that awaiting, printing or serializing a
//     namespace calls nothing.
//   - console.log/info/debug/warn/error: captured into Result.Logs, one
//     entry per call, arguments joined by spaces; strings as they are, Error
//     objects as "Name: message", anything else as JSON (or String when JSON
//     cannot hold it). Lines other than log are prefixed "[info] ",
//     "[debug] ", "[warn] ", "[error] ". No printf-style %s substitution.
//
// There is nothing else: no require, no import() (it rejects: "could not
// load module"), no std/os modules, no timers (setTimeout, setInterval,
// queueMicrotask), no fetch. eval and Function work but only reach this same
// empty realm. Atomics.wait throws (the engine cannot block).
//
// Calls start when the code yields to the event loop (awaits), each with a
// context carrying the RPC timeout and its issue position
// (tools.WithCallSeq). Calls in flight together run concurrently, each on a
// goroutine of its own; at most 64 of a run are in flight at once, the others
// wait in issue order. A call the code waits for alone runs on the VM's
// goroutine, which saves two thread hand-offs per round trip; a CallFunc
// that ignores its context still cannot hold the code past the RPC timeout.
// A call the code never yields after (it returns first) never starts. A failed call
// rejects with an Error whose message is the tool's error, with .code (the
// wire code: TOOL_ERROR, UNKNOWN_TOOL, PERMISSION_DENIED, RPC_TIMEOUT, …)
// and .tool ("ns:action"). The code may catch it; if it does not, Run fails
// with that code and message. A CallFunc that panics is a TOOL_ERROR. A
// CallFunc error wrapping *HaltError stops the run at once, uncatchably.
//
// A ctx carrying a Tape (WithTape) makes the run read the clock (Date.now,
// new Date(), Date()) and Math.random from Go, replaying the values the
// Tape recorded first; a run that ends early records what it read, so
// that a re-run makes the same calls (see tape.go).
//
// The function's return value (awaited) must be JSON-serializable: undefined
// becomes null, a function, symbol, BigInt or cycle is a CODE_ERROR naming
// its path ("return value is not JSON-serializable: function at $.a.b"),
// and a value over Limits.MaxResultBytes is a CODE_ERROR "return value too
// large (N bytes, limit M)". Values JSON drops or converts (undefined
// properties, NaN, Date, Map) follow JSON.stringify.
//
// # Errors
//
// Run's errors are *pmlerr.Error:
//
//   - CODE_ERROR: the code threw. Message is the thrown Error's message, or
//     the thrown value itself for a string, its JSON for other values
//     (`throw {a:1}` gives {"a":1}), "null", "undefined", "42". Details:
//     "name" (TypeError, …), "stack" (the first frame of the user's code)
//     and "line"/"column" (1-based, within the source given to Run) when
//     known. Recursion past the engine's stack limit (about 2000 JS calls,
//     fewer through built-ins) is CODE_ERROR "Maximum call stack size
//     exceeded". Repeated string doubling (s += s) builds ropes without
//     using memory and ends in CODE_ERROR "string too long", the engine's
//     2^30-character limit.
//   - SYNTAX_ERROR: the source does not parse; "line" and "column".
//   - MEMORY_LIMIT: the engine heap reached Limits.MemoryBytes and the code
//     did not recover. The engine often reports this as a thrown null; an
//     allocator hook makes the distinction from `throw null` reliable.
//   - EXECUTION_TIMEOUT: Limits.Timeout passed, the CPU budget
//     (Limits.CPUBudget, CPU time spent running JS; docs/limits.md) ran out, or ctx's deadline
//     passed (Err holds the context error), whether the code was computing,
//     waiting for a tool or looping on microtasks; CANCELLED when the caller
//     cancelled ctx instead. The engine cannot interrupt a single
//     built-in call (includes over 2^32 holes, a sort); Run still answers at
//     most 100 ms after the deadline, and then revokes the VM's heap, which
//     ends that call within microseconds (arena.go). Code waiting for a
//     promise that nothing can settle (no call in flight, no timers exist)
//     fails at once with this code instead of waiting for the timeout.
//   - MEMORY_LIMIT also when the arguments plus results moved through mcp.*
//     cross Limits.MaxCallBytes, naming the call (Details "tool").
//   - the code of an uncaught tool error (see above), with Details "tool"
//     and the tool error's own "suggestions", "declarations" and
//     "declaration" (fixDetails).
//   - INVALID_REQUEST for args that are not a JSON object, INTERNAL_ERROR
//     when the engine itself fails.
//
// # Isolation
//
// Every Run has its own engine runtime, memory limit and interrupt; runs
// share nothing but the process. The bridge captures the built-ins it uses
// before user code runs, so tampering with prototypes (Object, Array,
// Promise, JSON, Function, Map, WeakMap, RegExp, String) can break only the
// tampering run's own logic. Go memory a run can make the host hold is
// bounded too: call arguments in flight (by MemoryBytes), logs, results.
//
// Each run's VM works on its own goroutine. Fresh VMs come from a small pool
// (4) refilled in the background after runs, and used ones are closed in the
// background; a VM that ran user code is never reused. Texts of errors are
// cut to 8 KiB.
package sandbox
