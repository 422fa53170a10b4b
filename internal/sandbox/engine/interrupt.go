package engine

import (
	"math"
	"sync/atomic"
	"time"
	"unsafe"

	"modernc.org/libc"
	lib "modernc.org/libquickjs"
)

// A stretch of JS is one entry into the engine, from EnterJS to LeaveJS,
// and the interrupt handler is what stops it: at once after Stop, at the
// wall-clock deadline, or when it has used the CPU it was given.
//
// Where the system has a clock of a thread's CPU time (Linux:
// threadcpu_linux.go), EnterJS locks the calling goroutine to its OS thread
// for the stretch, so that everything the thread runs meanwhile is the
// stretch: the CPU it is charged is the CPU the code got, not the time it
// waited for a core on a busy machine (docs/limits.md). Reading that clock
// is a system call, ten times the monotonic clock's cost, and a round trip
// through mcp.* enters JS twice for a few microseconds each, so no stretch
// pays for it up front. The engine polls the handler at one call or
// backward jump in 10,000; in a stretch that is not metered yet it polls
// every earlyPoll, and the first poll past meterAfter of wall time reads
// the CPU clock. From then on the stretch counts the CPU time of its
// thread; before it, the wall time since EnterJS (a stretch shorter than
// meterAfter counts its wall time whole). Past that first read, the
// handler reads the CPU clock only once the stretch could have used the
// CPU it has left, since a thread cannot use more CPU than the wall time
// that passes.
// Elsewhere (threadcpu_other.go) a stretch counts its wall time, and the
// CPU it may use becomes a wall-clock deadline.

// interrupter tells the engine's interrupt handler when to stop the code,
// and meters the stretch of JS in progress. The handler runs on the
// goroutine driving the VM, inside the stretch; other goroutines only Stop
// the VM and read what the stretch used (JSTime).
type interrupter struct {
	stop     atomic.Bool
	deadline atomic.Int64 // wall clock, in monotonic time

	// What other goroutines read of the stretch in progress. gen is odd
	// during a stretch; a reader that sees it change read a stretch that
	// ended meanwhile. thread, once set, says the stretch is metered by
	// that thread's CPU clock: base is the clock at the first poll, prefix
	// the wall time from start to it; they are stored before thread.
	gen    atomic.Uint64
	start  atomic.Int64 // monotonic time of EnterJS
	thread atomic.Int64 // the thread running the stretch; 0: not metered (yet)
	base   atomic.Int64
	prefix atomic.Int64

	// The handler's own, on the goroutine driving the VM.
	cpuLeft int64   // CPU the stretch may use, in nanoseconds
	checkAt int64   // monotonic time of the handler's next read of the CPU clock
	metered bool    // the stretch counts CPU time (thread is set)
	counter uintptr // the engine's countdown to its next poll (JSContext.interrupt_counter)
}

func newInterrupter() *interrupter {
	i := &interrupter{}
	i.deadline.Store(neverDeadline)
	i.checkAt = neverDeadline
	return i
}

// neverDeadline is a deadline that never comes.
const neverDeadline = int64(math.MaxInt64)

// monotonicBase anchors monotonic: time.Since reads the monotonic clock, so
// setting the system clock moves no deadline.
var monotonicBase = time.Now()

// monotonic is the clock of the wall-clock deadline, in nanoseconds.
func monotonic() int64 { return int64(time.Since(monotonicBase)) }

// after returns the monotonic time d after now, or neverDeadline when that
// is past what an int64 holds.
func after(now int64, d time.Duration) int64 {
	if int64(d) > neverDeadline-now {
		return neverDeadline
	}
	return now + int64(d)
}

// EnterJS starts a stretch of JS on the calling goroutine, which must call
// LeaveJS when the engine returns, before anything else touches the VM. The
// engine stops the code once wallLeft has passed or once the stretch has
// used cpuLeft of CPU time (wall time where the system cannot tell;
// threadcpu_other.go). Stretches do not nest.
func (e *VM) EnterJS(wallLeft, cpuLeft time.Duration) {
	lockThread()
	i := e.intr
	now := monotonic()
	i.thread.Store(0)
	i.start.Store(now)
	i.gen.Add(1)
	i.cpuLeft = int64(cpuLeft)
	deadline := after(now, wallLeft)
	if threadClock {
		i.metered = false
		i.checkAt = now + int64(meterAfter)
		i.counter = uintptr(unsafe.Pointer(&(*lib.TJSContext)(cPointer(e.ctx)).Finterrupt_counter))
		c := (*int32)(cPointer(i.counter))
		*c = min(*c, earlyPoll)
	} else {
		deadline = min(deadline, after(now, cpuLeft))
	}
	i.deadline.Store(deadline)
}

// meterAfter is the wall time a stretch of JS runs before the interrupt
// handler reads its thread's CPU clock: what it runs until then counts its
// wall time. A round trip through mcp.* is well within it, and a stretch
// past it pays under 1% for the reads.
const meterAfter = 100 * time.Microsecond

// earlyPoll is how many calls and backward jumps the engine makes between
// two polls of the interrupt handler in a stretch not metered yet: often
// enough to meter it soon after meterAfter, where the engine's own 10,000
// can take long. Under the race detector on a busy machine, a loop on
// microtasks spent its whole budget of 400 ms of wall time before its first
// poll (TestCPUBudgetUnderLoad). A poll that does not read the CPU clock
// costs 30 ns; a round trip through mcp.* makes about 17 calls and jumps.
const earlyPoll = 64

// LeaveJS ends the stretch EnterJS started and returns the time it used.
func (e *VM) LeaveJS() time.Duration {
	i := e.intr
	now := monotonic()
	spent := i.spentHere(now)
	// Odd to even before the thread is let go: a reader that still sees
	// the stretch read the CPU clock of a thread running nothing else.
	i.gen.Add(1)
	i.checkAt = neverDeadline
	// Code the engine runs outside a stretch (a getter of a thrown object
	// while Go reads it) is not metered: the CPU left becomes a deadline on
	// the wall clock until the next stretch.
	i.deadline.Store(min(i.deadline.Load(), after(now, time.Duration(max(i.cpuLeft-spent, 0)))))
	unlockThread()
	return time.Duration(max(spent, 0))
}

// InJS reports whether a stretch of JS is in progress: EnterJS was called
// and LeaveJS not yet. Only the goroutine driving the VM may rely on it.
func (e *VM) InJS() bool { return e.intr.gen.Load()%2 == 1 }

// JSTime returns the time the stretch in progress has used so far, 0
// outside one; any goroutine may call it. It may miss the stretch that is
// ending, never count one twice or count what its thread ran after it.
func (e *VM) JSTime() time.Duration {
	i := e.intr
	g := i.gen.Load()
	if g%2 == 0 {
		return 0
	}
	spent := monotonic() - i.start.Load() // wall time: never less than the CPU
	if thread := i.thread.Load(); thread != 0 {
		if c, ok := threadCPUOf(thread); ok {
			spent = i.prefix.Load() + c - i.base.Load()
		}
	}
	if i.gen.Load() != g {
		return 0
	}
	return time.Duration(max(spent, 0))
}

// spentHere is the time the stretch has used at monotonic time now, read on
// its own thread.
func (i *interrupter) spentHere(now int64) int64 {
	if i.metered {
		if c, ok := threadCPU(); ok {
			return i.prefix.Load() + c - i.base.Load()
		}
	}
	return now - i.start.Load()
}

// cpuCheckStep is the least wall time between two reads of the CPU clock
// by the handler: the most CPU a stretch uses past its budget, give or take
// one poll, and what bounds the reads near the end of the budget.
const cpuCheckStep = 200 * time.Microsecond

// overBudget reads the CPU clock of the stretch's thread at monotonic time
// now: true when the stretch used the CPU it was given. The first read
// meters the stretch. A clock that fails leaves the stretch counting wall
// time, as where there is no such clock.
func (i *interrupter) overBudget(now int64) bool {
	c, ok := threadCPU()
	if !ok {
		i.metered = false
		i.thread.Store(0)
		i.checkAt = neverDeadline
		i.deadline.Store(min(i.deadline.Load(), after(i.start.Load(), time.Duration(i.cpuLeft))))
		return now >= i.deadline.Load()
	}
	if !i.metered {
		i.metered = true
		i.prefix.Store(now - i.start.Load())
		i.base.Store(c)
		i.thread.Store(currentThread())
	}
	left := i.cpuLeft - (i.prefix.Load() + c - i.base.Load())
	if left <= 0 {
		return true
	}
	i.checkAt = now + max(left, int64(cpuCheckStep))
	return false
}

// interruptHandler is the engine's interrupt handler: it polls it at one
// call or backward jump in 10,000, and a non-zero answer throws an
// uncatchable InternalError "interrupted".
func interruptHandler(tls *libc.TLS, rt, opaque uintptr) int32 {
	i := (*interrupter)(cPointer(opaque))
	if i.stop.Load() {
		return 1
	}
	now := monotonic()
	switch {
	case now >= i.deadline.Load():
		return 1
	case now >= i.checkAt:
		if i.overBudget(now) {
			return 1
		}
	case !i.metered && i.checkAt != neverDeadline:
		*(*int32)(cPointer(i.counter)) = earlyPoll // the engine just set 10,000
	}
	return 0
}
