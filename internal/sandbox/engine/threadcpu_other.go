//go:build !linux

package engine

// Outside Linux a stretch of JS counts its wall time, as the CPU budget did
// everywhere before (docs/limits.md): golang.org/x/sys offers no thread
// CPU clock on Windows, and no way to read another thread's on macOS or
// FreeBSD, which Run needs to stop a built-in that never polls the
// interrupt handler at the budget.
const threadClock = false

func lockThread()   {}
func unlockThread() {}

func currentThread() int64 { return 0 }

func threadCPU() (int64, bool) { return 0, false }

func threadCPUOf(int64) (int64, bool) { return 0, false }
