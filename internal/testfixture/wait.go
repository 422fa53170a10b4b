package testfixture

import (
	"testing"
	"time"
)

// WaitFor polls cond until it holds, failing the test after 30 s: for what
// other goroutines or processes bring about, with no guess of how long it
// takes on a loaded machine.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
