package gatewayclient

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/wire"
)

func notification(token any, progress, total float64, msg string) *mcp.ProgressNotificationClientRequest {
	return &mcp.ProgressNotificationClientRequest{Params: &mcp.ProgressNotificationParams{
		ProgressToken: token, Progress: progress, Total: total, Message: msg}}
}

// Only notifications for an execute in flight, with counts a run reports,
// are forwarded: a token this package never sent, one of a finished
// execute, one of another type, and values that are no call count are
// dropped, and the execute's next notification still goes through.
func TestRelayForwardsOnlyItsOwnCounts(t *testing.T) {
	r := newProgressRelay()
	var got []string
	report := func(_ context.Context, done, total int, tool string) {
		got = append(got, fmt.Sprintf("%d/%d %s", done, total, tool))
	}
	tok, _, closeRelay := r.open(context.Background(), report)
	oldTok, _, closeOld := r.open(context.Background(), report)
	closeOld()
	for _, n := range []*mcp.ProgressNotificationClientRequest{
		notification("pml-999", 1, 1, "never sent"),
		notification(oldTok, 1, 1, "finished"),
		notification(float64(1), 1, 1, "a number token"),
		notification(tok, -1, 0, "negative"),
		notification(tok, math.NaN(), 0, "NaN"),
		notification(tok, math.Inf(1), 0, "infinite"),
		notification(tok, 1e300, 0, "huge"),
		notification(tok, 1.5, 0, "fraction"),
		notification(tok, 1, -2, "negative total"),
		notification(tok, 1, 2, "math:add"),
	} {
		r.handle(context.Background(), n)
	}
	if want := []string{"1/2 math:add"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("forwarded %q, want %q", got, want)
	}
	closeRelay()
	r.handle(context.Background(), notification(tok, 2, 2, "after the answer"))
	if len(got) != 1 {
		t.Fatalf("forwarded after close: %q", got)
	}
}

// drain returns once the notifications the answer counts are forwarded; a
// gateway claiming more than it sent holds the answer for relayGrace at
// most, and a cancelled request not at all.
func TestRelayDrainIsBounded(t *testing.T) {
	r := newProgressRelay()
	tok, rel, closeRelay := r.open(context.Background(), func(context.Context, int, int, string) {})
	defer closeRelay()
	meta := mcp.Meta{wire.ProgressMeta: float64(2)}
	go func() {
		time.Sleep(20 * time.Millisecond)
		r.handle(context.Background(), notification(tok, 1, 2, "a"))
		r.handle(context.Background(), notification(tok, 2, 2, "b"))
	}()
	start := time.Now()
	rel.drain(context.Background(), meta)
	if took := time.Since(start); took >= relayGrace {
		t.Fatalf("drain waited %v with both notifications in", took)
	}

	start = time.Now()
	rel.drain(context.Background(), mcp.Meta{wire.ProgressMeta: float64(5)})
	if took := time.Since(start); took < relayGrace || took > relayGrace+5*time.Second {
		t.Fatalf("an overclaiming gateway held the answer %v, want about %v", took, relayGrace)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start = time.Now()
	rel.drain(ctx, mcp.Meta{wire.ProgressMeta: float64(5)})
	if took := time.Since(start); took > time.Second {
		t.Fatalf("a cancelled request waited %v", took)
	}
	// No count, or one of another type: nothing to wait for.
	for _, m := range []mcp.Meta{nil, {wire.ProgressMeta: "lots"}} {
		start = time.Now()
		rel.drain(context.Background(), m)
		if took := time.Since(start); took > time.Second {
			t.Fatalf("drain with %v waited %v", m, took)
		}
	}
}
