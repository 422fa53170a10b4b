package telemetry

import (
	"context"
	"crypto/sha256"

	"go.opentelemetry.io/otel/trace"
)

// PML ids become OTel ids deterministically, so spans exported by different
// processes at different times (a child trace is finished, and exported,
// before its parent) still point at each other: a trace id that is 32 hex
// digits is used as is, any other is hashed; span ids are a hash of the
// trace id and the task id ("" for the run's root span).

func traceIDOf(id string) trace.TraceID {
	if tid, err := trace.TraceIDFromHex(id); err == nil {
		return tid
	}
	sum := sha256.Sum256([]byte("pml-trace:" + id))
	var tid trace.TraceID
	copy(tid[:], sum[:])
	return tid
}

func spanIDOf(traceID, taskID string) trace.SpanID {
	sum := sha256.Sum256([]byte("pml-span:" + traceID + "/" + taskID))
	var sid trace.SpanID
	copy(sid[:], sum[:])
	if !sid.IsValid() {
		sid[7] = 1
	}
	return sid
}

// fixedIDs is the SDK's id generator: it hands out the ids Export put into
// the context, so spans carry PML's ids instead of random ones.
type fixedIDs struct{}

type idsKey struct{}

type ids struct {
	trace trace.TraceID
	span  trace.SpanID
}

func withIDs(ctx context.Context, tid trace.TraceID, sid trace.SpanID) context.Context {
	return context.WithValue(ctx, idsKey{}, ids{trace: tid, span: sid})
}

func (fixedIDs) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	v, _ := ctx.Value(idsKey{}).(ids)
	return v.trace, v.span
}

func (fixedIDs) NewSpanID(ctx context.Context, _ trace.TraceID) trace.SpanID {
	v, _ := ctx.Value(idsKey{}).(ids)
	return v.span
}
