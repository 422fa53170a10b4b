// Package engine is the sandbox's JavaScript engine: QuickJS transpiled to
// Go (modernc.org/libquickjs), driven through its C API. It is the only
// package of this module that imports the engine, modernc.org/libc or
// unsafe (TestOnlyTheEngineTouchesItsInternals), so everything that depends
// on the engine's private layout is here, checked against one pinned
// version (TestEngineInternals).
//
// What it adds to the engine:
//
//   - a heap per VM in an arena of its own (arena.go), whose access Revoke
//     takes away, so that a built-in stuck in a native loop faults and its
//     goroutine ends (docs/limits.md);
//   - an interrupt handler polling a stop flag, a wall-clock deadline and
//     the CPU a stretch of JS may use, metered by the CPU clock of the
//     thread running it where the system has one (Stop, EnterJS, LeaveJS,
//     JSTime; interrupt.go);
//   - one host function through which JS reaches Go (InstallHost), with
//     values read without a conversion layer, and plain data written as
//     JSON in Go (PlainJSON).
//
// What it relies on besides the public C API, as the transpiled structs:
//
//   - JSMallocState (malloc_size, malloc_limit, opaque: the arena) and
//     JSMallocFunctions, as JS_NewRuntime2 takes them;
//   - JSRuntime: malloc_ctx, strip_flags (JS_SetStripInfo), and the
//     in_out_of_memory bit of the bit field at F__ccgo1256;
//   - JSContext: global_obj, class_proto and interrupt_counter;
//   - JSObject: the reference count first, and what plainjson.go reads of
//     shapes, fast arrays and property descriptors;
//   - the transpiled calling convention: a C function pointer is the
//     address of a Go func value, static for a top-level function.
package engine
