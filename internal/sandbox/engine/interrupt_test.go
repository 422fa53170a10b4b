package engine

import (
	"sync/atomic"
	"testing"
	"time"
	"unsafe"
)

// busy runs a loop that never ends in a stretch with these limits and
// returns what it threw, the time LeaveJS reported and the wall time the
// stretch took.
func busy(t *testing.T, vm *VM, wallLeft, cpuLeft time.Duration) (thrown string, spent, wall time.Duration) {
	t.Helper()
	code, ok := vm.Compile("for (;;) {}", false)
	if !ok {
		t.Fatal(vm.TakeException(1 << 10).Message)
	}
	start := time.Now()
	vm.EnterJS(wallLeft, cpuLeft)
	v := vm.EvalBytecode(code)
	spent = vm.LeaveJS()
	wall = time.Since(start)
	if !v.IsException() {
		vm.Free(v)
		t.Fatal("the loop ended")
	}
	return vm.TakeException(1 << 10).Message, spent, wall
}

// A stretch ends when it used the CPU it was given, and LeaveJS reports
// about that much; JSTime, read from another goroutine meanwhile, never
// counts more than the wall time that passed.
func TestStretchStopsAtItsCPU(t *testing.T) {
	vm := newVM(t)
	const cpu = 150 * time.Millisecond
	var stop atomic.Bool
	var over atomic.Int64
	var seen atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		for !stop.Load() {
			g := vm.intr.gen.Load()
			from := vm.intr.start.Load()
			got := vm.JSTime()
			wall := time.Duration(monotonic() - from)
			if g%2 == 1 && vm.intr.gen.Load() == g && got > wall+time.Millisecond {
				over.Store(int64(got))
			}
			if got > 0 {
				seen.Store(true)
			}
			time.Sleep(time.Millisecond)
		}
	}()
	msg, spent, wall := busy(t, vm, time.Minute, cpu)
	stop.Store(true)
	<-done
	if msg != "interrupted" {
		t.Fatalf("threw %q, want interrupted", msg)
	}
	if threadClock && vm.intr.thread.Load() == 0 {
		t.Error("the stretch counted wall time to its end: it was never metered")
	}
	if spent < cpu || spent > wall {
		t.Errorf("LeaveJS reported %v for a stretch given %v that took %v of wall time", spent, cpu, wall)
	}
	if wall > cpu+10*time.Second {
		t.Errorf("the stretch took %v", wall)
	}
	if !seen.Load() {
		t.Error("JSTime never saw the stretch")
	}
	if n := over.Load(); n != 0 {
		t.Errorf("JSTime reported %v, more than the wall time of the stretch", time.Duration(n))
	}
	if vm.InJS() || vm.JSTime() != 0 {
		t.Errorf("after LeaveJS: InJS %v, JSTime %v", vm.InJS(), vm.JSTime())
	}
}

// The wall-clock deadline stops a stretch whatever CPU it has left.
func TestStretchStopsAtItsDeadline(t *testing.T) {
	vm := newVM(t)
	msg, spent, wall := busy(t, vm, 100*time.Millisecond, time.Hour)
	if msg != "interrupted" || wall < 100*time.Millisecond || spent > wall {
		t.Fatalf("threw %q after %v, reporting %v", msg, wall, spent)
	}
}

// A stretch with no CPU left stops at the engine's first poll.
func TestStretchWithNoCPULeft(t *testing.T) {
	vm := newVM(t)
	msg, _, wall := busy(t, vm, time.Minute, 0)
	if msg != "interrupted" || wall > 5*time.Second {
		t.Fatalf("threw %q after %v", msg, wall)
	}
	// The VM runs code again after an interrupt.
	vm.EnterJS(time.Minute, time.Minute)
	got, err := evalText(vm, "'a' + 1")
	vm.LeaveJS()
	if err != nil || got != "a1" {
		t.Fatalf("after the interrupt: %q, %v", got, err)
	}
}

// BenchmarkInterruptCheck measures one poll of the interrupt handler in a
// stretch of JS that computes: "metered" as the handler does it, reading the
// CPU clock only once the budget could have run out; "clock every poll" as
// it would, reading it at every poll (what the first does at a stretch's
// first poll).
func BenchmarkInterruptCheck(b *testing.B) {
	vm := newVM(b)
	opaque := uintptr(unsafe.Pointer(vm.intr))
	for _, every := range []bool{false, true} {
		b.Run(map[bool]string{false: "metered", true: "clock every poll"}[every], func(b *testing.B) {
			vm.EnterJS(time.Hour, time.Hour)
			defer vm.LeaveJS()
			for b.Loop() {
				if every {
					vm.intr.checkAt = 0
				}
				if interruptHandler(vm.tls, vm.rt, opaque) != 0 {
					b.Fatal("interrupted")
				}
			}
		})
	}
}

// BenchmarkEnterLeaveJS measures the bounds of a stretch of JS too short to
// be polled, which a round trip through mcp.* makes a few of.
func BenchmarkEnterLeaveJS(b *testing.B) {
	vm := newVM(b)
	for b.Loop() {
		vm.EnterJS(time.Hour, time.Hour)
		vm.LeaveJS()
	}
}
