package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"
)

// A run that paused for an approval waits for it (the package parks it),
// but one that ended first (its deadline passed while it waited) resumes by
// running the code again with its completed calls answered from a journal
// (internal/approval). For the re-run to make the same calls, it must also
// read the same time and randomness: every run reads the clock (Date.now,
// new Date(), Date()) and Math.random from Go, which, for a run given a
// Tape, keeps every value in order and, when the run ends early, records
// them; a re-run reads the recorded values first, then real ones. The
// engine offers no other clock or random source (no performance, no
// crypto). A read is one host call with no JS wrapper, costing less than
// the engine's own Date.now (BenchmarkClockLoop).

// Tape holds a run's time and randomness between the runs of one paused
// execution. Values is what a run reads first (nil: nothing recorded);
// Record keeps what a run that ended early read, which starts with Values.
type Tape interface {
	Values() json.RawMessage
	Record(json.RawMessage)
}

type tapeKey struct{}

// WithTape makes the Run under ctx read from and record to t. Code nested
// in one of its calls (a capability) runs without it.
func WithTape(ctx context.Context, t Tape) context.Context {
	return context.WithValue(ctx, tapeKey{}, t)
}

func tapeOf(ctx context.Context) Tape {
	t, _ := ctx.Value(tapeKey{}).(Tape)
	return t
}

// maxTapeValues bounds the values kept per source: a busy loop reading the
// clock reads real values past it, and keeps no more.
const maxTapeValues = 1 << 16

// tapeValues is a tape's JSON.
type tapeValues struct {
	Now    []float64 `json:"now"`
	Random []float64 `json:"random"`
}

// runTape is the tape of one run; it belongs to the goroutine driving the VM.
type runTape struct {
	to          Tape
	now, random tapeSource
}

// startTape reads what t recorded, checked, so that a damaged record fails
// the run before any code runs.
func startTape(t Tape) (*runTape, error) {
	if t == nil {
		return nil, nil
	}
	var v tapeValues
	if raw := t.Values(); len(raw) > 0 {
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("the recorded time and randomness: %w", err)
		}
		if len(v.Now) > maxTapeValues || len(v.Random) > maxTapeValues {
			return nil, fmt.Errorf("the recorded time and randomness hold more than %d values of a source", maxTapeValues)
		}
	}
	return &runTape{to: t, now: tapeSource{values: v.Now}, random: tapeSource{values: v.Random}}, nil
}

// record hands the values read so far to the Tape.
func (t *runTape) record() {
	b, err := json.Marshal(tapeValues{Now: t.now.values, Random: t.random.values})
	if err != nil { // a value JSON cannot hold: the re-run reads the old record
		slog.Warn("sandbox: cannot record the time and randomness of a paused run", "err", err)
		return
	}
	t.to.Record(b)
}

// tapeSource is one source's values: recorded ones first, then real ones,
// which are kept up to maxTapeValues.
type tapeSource struct {
	values []float64
	pos    int // values read
}

func (s *tapeSource) read(real func() float64) float64 {
	if s.pos < len(s.values) {
		s.pos++
		return s.values[s.pos-1]
	}
	v := real()
	s.pos++
	if len(s.values) < maxTapeValues {
		s.values = append(s.values, v)
	}
	return v
}

// nowMillis is Date.now: milliseconds since the epoch.
func nowMillis() float64 { return float64(time.Now().UnixMilli()) }
