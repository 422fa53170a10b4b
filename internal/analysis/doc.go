// Package analysis turns a code-mode snippet (TypeScript, a function body
// that calls tools as `await mcp.ns.action(args)`) into what the gateway needs
// before anything runs: the JavaScript the sandbox evaluates, the tools the
// code uses (for routing), a StaticStructure of its control flow and a DAG of
// data dependencies between tool calls.
//
// # Pipeline
//
// The user's code is wrapped as `(async function (args) {` + code + `\n})`,
// the prefix on the same line as the user's line 1 so line numbers match,
// and stripped with esbuild's Transform (TS loader, target ES2023). esbuild's
// syntax errors are mapped back to the user's line and column. The output is
// parsed with github.com/tdewolff/parse/v2/js (a small, fast ES2020+ parser
// with scope resolution: every identifier is a *js.Var shared by all its uses,
// which is what data-dependency tracking needs) and walked once, in
// evaluation order.
//
// Code cannot import: static import/export is a SYNTAX_ERROR (esbuild rejects
// it inside a function body), and so are dynamic import() and import.meta.
// A snippet that closes the wrapper early (`}); other(); (function () {`) is a
// SYNTAX_ERROR at the brace that closes the code body. So is code nested more
// than 200 levels deep (brackets and expression-bodied arrows), checked with a
// tokenizer before esbuild, whose renamer is quadratic in scope depth.
//
// esbuild may put runtime helpers before the function (decorators, `using`):
// JS is then `(() => { helpers; return (async function (args) {...}); })()`,
// still an expression whose value is the function, on the same lines.
//
// If the JavaScript parser rejects esbuild's output (expressions nested more
// than 1000 deep), the analysis falls back to a token scan: the tools and call
// sites it can see, no dependencies, and Dynamic set.
//
// # Positions
//
// Lines and columns are 1-based. Columns count UTF-16 code units, the unit of
// JavaScript strings and of source maps; for ASCII they are characters.
//
// # Tasks
//
// Every `mcp.ns.action(...)` call (also `mcp["ns"]["action"]`, `mcp.ns["action"]`,
// optional chaining, calls inside callbacks, nested functions, template
// literals) is one task, numbered "t1", "t2", ... in evaluation order: source
// order, except that a call nested in another call's arguments is numbered
// before it. A call site inside a loop is one task, whatever the iteration
// count. Tools lists every tool the code names, in order of first
// appearance, whether or not the reference is called (`const read =
// mcp.fs.read`, a call in a function nothing calls, every branch).
//
// A task depends on an earlier task when its arguments use that task's result,
// directly or through variables derived from it (assignment, destructuring,
// member access, arithmetic, array methods, mutation such as `acc.push(r)`,
// callback parameters, Promise.all elements, local function parameters and
// return values). Tasks inside a branch also depend on the tasks whose results
// the branch condition uses, and tasks in a loop body on the tasks the loop
// header uses. Variables are tracked in source order: an assignment replaces
// what a variable held, and after a branch, a loop body or a function body
// (code that may run or not) a variable may hold its old or its new value. A
// value that only flows backwards through a loop iteration is not tracked.
//
// DependsOn lists direct dependencies: one that another dependency already
// implies (the dependency with the highest layer depends on it too) is left
// out, and at most 32 are kept, the highest layers first, so that hostile code
// cannot make the DAG quadratic. Layers are the longest-path layering from 0
// and are not changed by either rule; a dependency cycle (possible through
// recursive local functions) is broken by dropping the edge that closes it.
//
// # Order on a resource
//
// The analysis does not know which calls write, so calls on the same
// resource keep their source order: a task whose first argument is an
// object literal naming a string literal under path, file, filename, source
// or destination gets After, for each such resource, the latest earlier task
// naming it (under any of these keys), unless that task is already a direct
// data dependency. After is an order, not data: it changes neither
// DependsOn nor Layer. A computed value names no resource, so `{path: p}`
// is never ordered: the analysis cannot tell two variables apart.
//
// # Loops
//
// A task's Loops are the ids of the loop nodes around its call site,
// outermost first, so a reader of the DAG alone can tell a site that runs
// once per iteration.
//
// # Decisions
//
// DAG.Decisions are the StaticStructure's decision nodes that hold a task
// (same ids, kind and condition), each with DependsOn (the tasks its
// condition reads, reduced like a task's) and, per branch label in source
// order, the tasks and decisions directly under it, looking through loops
// and forks, which select nothing.
//
// # Task arguments
//
// A task node's Args is the first argument as JSON, where it is literal:
// numbers, strings, booleans, null, object and array literals. A value read
// from an earlier result is {"$ref": "t1.field"} ("t1" the whole result,
// "t1.items[0]" an element, "t1.items[]" each element of an iteration, for
// example a for-of variable or a map callback parameter). Anything else is
// {"$expr": "<JavaScript source of the expression>"}; an object or array
// literal with a spread or a computed key is one $expr as a whole.
//
// # StaticStructure
//
// Nodes: "task" (ID equal to the DAG task's), "decision" (Kind if, switch,
// ternary, and, or, nullish; Condition the tested expression), "loop" (Kind
// for, for_in, for_of, while, do_while, or an iteration method such as map,
// forEach, reduce; Condition the loop header), "fork"/"join" (Kind all,
// allSettled, race, any). Conditions are JavaScript printed from esbuild's
// output (no types, normalized quotes and spacing), at most 256 bytes. Control
// nodes that contain no task are omitted.
// "capability" is reserved for the gateway, which may relabel a task.
//
// Edges: "sequence" from a task to a task or control node that uses its
// result; "conditional" from a decision to the first-level nodes of each
// branch, Label "true", "false", "nullish", a case expression or "default";
// "loop_body" from a loop to the first-level nodes of its body; "fork" from a
// fork to each of its first-level nodes and "join" from each of them to the
// matching join.
//
// # Dynamic access
//
// Dynamic is set when the code can reach tools in a way the analysis cannot
// enumerate: a computed key (mcp[x], mcp.ns[x]), mcp or mcp.ns used as a value
// (aliases such as `const m = mcp`, `const {fs} = mcp`, passing mcp to a
// function), eval, Function or a .constructor property, globalThis/this used
// other than to read a named property. Calls through an alias (`m.fs.read()`,
// `fs.read()` after `const {fs} = mcp`) are still recorded as tasks.
//
// This is a static analysis of code that may be hostile: it finds what code
// written to call tools does, not every way code written to hide a call can
// reach one (`f[k]` with k computed to "constructor" builds a function from a
// string). Whoever runs the code must still check each call's routing.
//
// # ArgsSchema
//
// The schema is inferred from how the code reads its `args` parameter:
// property reads (args.x, args["x"], args?.x, nested args.a.b, through aliases
// such as `const o = args.opts`), destructuring (`const {x, y = 1} = args`),
// defaults (`args.n ?? 10`, `args.n || 10`), `typeof args.x === "number"`,
// comparisons with literals, arithmetic, string and array methods, for-of.
// A property is required when it is read without a default or a guard
// (`if (args.x)`, `args.x && ...`, `!args.x`, `args.x === undefined`,
// optional chaining, `"x" in args`).
package analysis
