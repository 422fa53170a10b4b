package gcpolicy

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

func TestApply(t *testing.T) {
	t.Setenv("GOGC", "")
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	restore := Apply()
	if got := debug.SetGCPercent(Percent); got != Percent {
		t.Errorf("GC percent %d; want %d", got, Percent)
	}
	restore()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("after restore: %d; want 100", got)
	}
}

func TestEnvironmentWins(t *testing.T) {
	t.Setenv("GOGC", "50")
	before := debug.SetGCPercent(50)
	defer debug.SetGCPercent(before)
	Apply()()
	if got := debug.SetGCPercent(50); got != 50 {
		t.Errorf("GC percent %d; want the environment's 50", got)
	}
}

func TestPercentFor(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		live, roots uint64
		want        int
	}{
		{0, 0, Percent},
		{20 * mib, 4 * mib, Percent},       // small: 400 gathers 96 MiB
		{40 * mib, 0, Percent},             // 400 gathers exactly the bound
		{160 * mib, 0, 100},                // the bound: 160 MiB
		{400 * mib, 400 * mib, 20},         // 10,000 parked: 160 MiB is 20%
		{600 * mib, 700 * mib, MinPercent}, // 160 MiB would be 12%
		{8 << 30, 0, MinPercent},
	} {
		if got := percentFor(c.live, c.roots, MaxHeadroom); got != c.want {
			t.Errorf("percentFor(%d MiB live, %d MiB roots) = %d; want %d", c.live/mib, c.roots/mib, got, c.want)
		}
	}
}

// With more live data than its headroom allows at Percent, the pace drops
// after the next collection, and comes back when the data goes.
func TestTunerBoundsHeadroom(t *testing.T) {
	before := debug.SetGCPercent(Percent)
	defer debug.SetGCPercent(before)
	tu := newTuner(8 << 20)
	defer tu.stopped.Store(true)
	tu.arm()

	live := make([][]*int, 64) // 64 MiB of pointers: scanned, so live
	for i := range live {
		live[i] = make([]*int, (1<<20)/8)
	}
	waitPercent(t, func(p int) bool { return p == MinPercent })
	runtime.KeepAlive(live)
	live = nil
	waitPercent(t, func(p int) bool { return p == Percent })
}

func waitPercent(t *testing.T, ok func(int) bool) {
	t.Helper()
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		time.Sleep(10 * time.Millisecond) // the cleanup runs after the collection
		metrics.Read(s)
		p := int(s[0].Value.Uint64())
		if ok(p) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("GC percent stays %d", p)
		}
	}
}
