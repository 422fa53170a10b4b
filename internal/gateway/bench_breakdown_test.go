package gateway_test

import (
	"bytes"
	"context"
	"os"
	"runtime"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/admission"
	"github.com/pml-go/pml/internal/sandbox"
)

// snapshot is what the process holds at one moment.
type snapshot struct {
	goroutines  int
	stack, heap uint64 // Go stacks and heap spans in use
	rss         float64
	groups      map[string]int // goroutines by the top of their stack and their creator
}

func takeSnapshot() snapshot {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	rss, _, _ := readMemory()
	s := snapshot{goroutines: runtime.NumGoroutine(), stack: ms.StackInuse, heap: ms.HeapInuse, rss: rss, groups: map[string]int{}}
	var buf bytes.Buffer
	_ = pprof.Lookup("goroutine").WriteTo(&buf, 2)
	for _, g := range strings.Split(buf.String(), "\n\n") {
		var key []string
		for _, l := range strings.Split(g, "\n")[1:] {
			if strings.HasPrefix(l, "\t") || l == "" || (len(key) >= 2 && !strings.HasPrefix(l, "created by")) {
				continue
			}
			fn, _, _ := strings.Cut(l, " in goroutine")
			if i := strings.LastIndex(fn, "("); i > 0 && strings.HasSuffix(fn, ")") {
				fn = fn[:i]
			}
			key = append(key, fn)
		}
		s.groups[strings.Join(key, " <- ")]++
	}
	return s
}

// TestParkedBreakdown logs what one execution parked at the barrier holds
// (docs/performance.md "What one parked execution holds"): the goroutines,
// Go stacks and heap the process gains per execution when a wave of n
// waits, and the live heap after a collection, and fails past the bounds
// below. It runs only with PML_PARKED_BREAKDOWN=n (1,000 for the bounds);
// PML_PARKED_HEAPPROFILE=file also writes a heap profile of that moment.
func TestParkedBreakdown(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("PML_PARKED_BREAKDOWN"))
	if n == 0 {
		t.Skip("set PML_PARKED_BREAKDOWN to the size of the wave")
	}
	p := startParkingWith(t, n, admission.New(admission.Limits{MaxExecutions: n + 64, MaxExecutionsPerTenant: -1, MaxQueue: n, QueueWait: time.Minute, MemoryCeiling: -1}, sandbox.Limits{}))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	p.wave(ctx, barrierCode, barrierWant).failIfErrors(t) // warm
	runtime.GC()
	time.Sleep(200 * time.Millisecond) // the last wave's goroutines end
	before := takeSnapshot()
	var beforeLive uint64
	{
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		beforeLive = ms.HeapAlloc
	}
	var at snapshot
	var live uint64
	p.barrier.onFull = func() {
		// The last call of the wave arrives while every other waits: they
		// had the time to put their VM heaps away (sandbox parkAfter).
		at = takeSnapshot()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		live = ms.HeapAlloc
		if path := os.Getenv("PML_PARKED_HEAPPROFILE"); path != "" {
			if f, err := os.Create(path); err == nil {
				_ = pprof.Lookup("heap").WriteTo(f, 0)
				_ = f.Close()
			}
		}
	}
	p.wave(ctx, barrierCode, barrierWant).failIfErrors(t)
	kib := func(a, b float64) float64 { return (b - a) / 1024 / float64(n) }
	goroutines, stacks, liveKiB := float64(at.goroutines-before.goroutines)/float64(n), kib(float64(before.stack), float64(at.stack)), kib(float64(beforeLive), float64(live))
	t.Logf("per parked execution (wave of %d, clients and barrier server included): %.2f goroutines, Go stacks %.1f KiB, Go heap in use %.1f KiB, live after a collection %.1f KiB, RSS %.1f KiB",
		n, goroutines, stacks, kib(float64(before.heap), float64(at.heap)), liveKiB, kib(before.rss*1024*1024, at.rss*1024*1024))
	// Bounds a little above what waves of 1,000 measured (7 goroutines, a
	// few stragglers of the warm wave at times; 67-82 KiB of stacks; 1.5-9.5
	// KiB live), below what the execution held before: a goroutine more
	// each, the VM goroutine's stack reserve grown back (16 KiB and more),
	// or the decoder's 64-entry _meta maps back (12-16 KiB live) fails.
	// Resident memory moves too much with the collector's timing to be
	// bounded here.
	const maxGoroutines, maxStackKiB, maxLiveKiB = 7, 96, 11
	if goroutines >= maxGoroutines+1 || stacks > maxStackKiB || liveKiB > maxLiveKiB {
		t.Errorf("a parked execution holds %.2f goroutines, %.1f KiB of stacks, %.1f KiB of live heap; at most %d, %d KiB, %d KiB",
			goroutines, stacks, liveKiB, maxGoroutines, maxStackKiB, maxLiveKiB)
	}
	type group struct {
		key string
		n   int
	}
	var groups []group
	for k, v := range at.groups {
		if d := v - before.groups[k]; d > n/10 {
			groups = append(groups, group{k, d})
		}
	}
	sort.Slice(groups, func(i, j int) bool { return groups[i].n > groups[j].n })
	for _, g := range groups {
		t.Logf("%6d %s", g.n, g.key)
	}
}
