package gcpolicy

import (
	"runtime/debug"
	"testing"
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
