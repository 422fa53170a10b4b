// Package gcpolicy sets how often the garbage collector of a pml process
// runs (docs/configuration.md, GOGC; docs/performance.md says what it
// measured).
//
// Every MCP request through the Go SDK allocates about half a megabyte of
// short-lived buffers (its JSON decoder takes a fresh 32 KiB buffer per
// message part), while the live heap of a pml process is small. At Go's
// default GOGC of 100 the collector then runs every few requests: it took a
// third of the CPU of a loopback round trip and 1 ms of the 3 ms a hybrid
// execution adds. At 400 the heap may grow to five times the live data
// between collections, tens of megabytes here, and that cost mostly goes.
//
// Five times is too much once the live data is large: a gateway holding
// 10,000 parked executions has most of a gigabyte of live heap and
// goroutine stacks, and at 400 it would gather four times that in garbage
// before collecting. So after every collection the pace is set again, so that the
// garbage gathered before the next one stays under MaxHeadroom, but never
// below MinPercent, where collecting would take most of the CPU.
package gcpolicy

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
)

const (
	// Percent is the GOGC pml runs with while the live data is small.
	Percent = 400
	// MaxHeadroom is the most garbage the heap may gather between two
	// collections once the live data is large enough for Percent to
	// allow more. 10,000 parked executions peak as they are answered, with
	// most of their live data still held and the answers' garbage on top:
	// 160 MiB kept that wave under 1 GiB, for a sixth more of the gateway's
	// CPU than 384 MiB, which peaked at 1.3 GiB (issue 42;
	// docs/performance.md "Near the floor (issue 42)").
	MaxHeadroom = 160 << 20
	// MinPercent is the lowest pace the headroom bound sets: with more live
	// data than MaxHeadroom*100/MinPercent (941 MiB), the headroom grows with
	// it.
	MinPercent = 17
)

// Apply sets the collector's pace to Percent, bounded by MaxHeadroom, unless
// the GOGC environment variable chose one; it returns a function restoring
// the previous pace. cmd/pml applies it at start; benchmarks that stand in
// for a pml process apply it too, so they measure what the binary does.
func Apply() (restore func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	t := newTuner(MaxHeadroom)
	old := debug.SetGCPercent(Percent)
	t.arm()
	return func() {
		t.stopped.Store(true)
		debug.SetGCPercent(old)
	}
}

// tuner sets the pace after every collection. It learns of one through a
// cleanup on an object nothing references, re-armed each time.
type tuner struct {
	headroom uint64
	stopped  atomic.Bool
	// samples is used only by retune, which runs on one cleanup at a time:
	// each cleanup arms the next.
	samples []metrics.Sample
}

func newTuner(headroom uint64) *tuner {
	return &tuner{headroom: headroom, samples: []metrics.Sample{
		{Name: "/gc/heap/live:bytes"},
		{Name: "/gc/scan/stack:bytes"},
		{Name: "/gc/scan/globals:bytes"},
	}}
}

// sentinel holds a pointer so that it is not batched with other small
// objects, which would keep it alive past the collection it should report.
type sentinel struct{ _ *int }

func (t *tuner) arm() {
	runtime.AddCleanup(&sentinel{}, func(t *tuner) {
		if t.stopped.Load() {
			return
		}
		t.retune()
		t.arm()
	}, t)
}

func (t *tuner) retune() {
	metrics.Read(t.samples)
	var live, roots uint64
	for i, s := range t.samples {
		if s.Value.Kind() != metrics.KindUint64 {
			return // a runtime without the metric: keep the pace
		}
		if i == 0 {
			live = s.Value.Uint64()
		} else {
			roots += s.Value.Uint64()
		}
	}
	debug.SetGCPercent(percentFor(live, roots, t.headroom))
}

// percentFor is the GOGC whose headroom stays under headroom. The runtime
// lets the heap grow past the live heap by GOGC percent of the live heap
// plus the stacks and globals it scans (roots).
func percentFor(live, roots, headroom uint64) int {
	scanned := live + roots
	if scanned == 0 {
		return Percent
	}
	return int(min(max(headroom*100/scanned, MinPercent), Percent))
}
