//go:build linux

package engine

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// threadClock says that a stretch of JS is metered by the CPU clock of the
// thread running it (interrupt.go).
const threadClock = true

// lockThread keeps the calling goroutine on its OS thread, and any other
// goroutine off it, until unlockThread: the thread's CPU time is then the
// stretch's.
func lockThread() { runtime.LockOSThread() }

func unlockThread() { runtime.UnlockOSThread() }

// currentThread is the calling thread's id, by which another goroutine
// reads its CPU clock (threadCPUOf).
func currentThread() int64 { return int64(unix.Gettid()) }

// threadCPU is the CPU time the calling thread has used, in nanoseconds.
func threadCPU() (int64, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, false
	}
	return ts.Nano(), true
}

// threadCPUOf is the CPU time thread tid of this process has used. Its
// clock's id is the one the kernel derives from a thread id (what
// pthread_getcpuclockid returns): the id's complement shifted by three,
// with the bits of a per-thread clock (4) measuring scheduled time (2).
func threadCPUOf(tid int64) (int64, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(int32(^uint32(tid)<<3|6), &ts); err != nil {
		return 0, false
	}
	return ts.Nano(), true
}
