package testfixture

import (
	"os"
	"testing"
	"time"
)

// waitBound is how long WaitFor waits when the test has no deadline: a
// correctness bound, not a timing assertion. A loaded machine (2 cores,
// the whole `go test -race ./...` at once) once took more than 30 s for
// 1,024 cancelled calls to leave a server (issue 41), so the bound is
// generous; a test that hangs still fails, later.
const waitBound = 5 * time.Minute

// WaitFor polls cond until it holds, failing the test after a generous
// bound (the test binary's deadline less a margin for its report, else
// waitBound): for what other goroutines or processes bring about, with no
// guess of how long it takes on a loaded machine.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	start := time.Now()
	deadline := start.Add(waitBound)
	if d, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if end, ok := d.Deadline(); ok && end.Add(-10*time.Second).Before(deadline) {
			deadline = end.Add(-10 * time.Second)
		}
	}
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still waiting for %s after %s", what, time.Since(start).Round(time.Millisecond))
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// LongTestsEnv names the variable that opts into the long tests: load and
// soak suites, and builds of the whole module per OS, which `.ci/run` runs
// in a `go test` of their own (docs/testing.md "Long tests").
const LongTestsEnv = "PML_LONG_TESTS"

// Long skips t unless PML_LONG_TESTS=1, so that `go test -race ./...`
// stays within its time budget on 2 cores (docs/testing.md).
func Long(t testing.TB) {
	t.Helper()
	if os.Getenv(LongTestsEnv) != "1" {
		t.Skipf("a long test: runs with %s=1 (.ci/run sets it; docs/testing.md)", LongTestsEnv)
	}
}
