// Package tracing records hierarchical execution traces (docs/protocol.md
// "Traces") and carries them, sanitized, to the gateway.
//
// The pipeline (docs/architecture.md): a Recorder wraps the sandbox's mcp.*
// bridge so that every tool call is captured where it happens (not parsed from
// stdout); Finish turns the recording into a Trace; a Sanitizer redacts secrets
// and masks personal data before a trace is stored or leaves the machine; on the
// package side a persisted Queue holds traces until a Syncer has delivered them
// to the gateway's POST /api/traces.
//
// Every trace is bounded (truncation.go, capture.go, bound.go): the Recorder
// keeps the first and last calls and counts the others per tool, copies at
// most a bounded prefix of each value within a budget per run, and Bound
// cuts the sanitized trace to MaxTraceBytes, recording what it left out in
// Trace.Truncated. So a run of any length costs bounded memory and time to
// trace, and the gateway never refuses a package's trace for its size.
//
// A capability that calls another capability produces a child trace: the
// Recorder puts its trace id into the call's context (TraceIDFrom), the nested
// run uses it as ParentTraceID and reports its own id back with NoteChildTrace,
// so the parent's task points at the child and the child at the parent. The
// 32-hex trace id doubles as a W3C trace-id (Traceparent) when a run crosses
// the package/gateway wire.
package tracing
