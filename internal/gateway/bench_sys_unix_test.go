//go:build unix

package gateway_test

import (
	"syscall"
	"testing"
	"time"
)

// cpuTime is the user and system CPU time this process has used. A
// benchmark's CPU per op is much steadier than its wall time on a shared
// machine; the load of other processes barely moves it.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// ensureFiles raises the open-file limit to at least n. Go raises the soft
// limit to the hard one at start-up already; where the hard limit is lower
// than n, it is raised too when the process may (CAP_SYS_RESOURCE, e.g. as
// root), and the test is skipped, saying why, when it may not.
func ensureFiles(tb testing.TB, n uint64) {
	tb.Helper()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		tb.Fatalf("getrlimit: %v", err)
	}
	if lim.Cur >= n {
		return
	}
	want := lim
	want.Cur = n
	want.Max = max(n, lim.Max)
	err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &want)
	if err == nil {
		return
	}
	if lim.Max >= n {
		tb.Skipf("need %d open files, the limit is %d and raising it failed: %v", n, lim.Cur, err)
	}
	tb.Skipf("need %d open files, the hard limit is %d and raising it needs CAP_SYS_RESOURCE: %v", n, lim.Max, err)
}
