package proctree

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestKillEndsTheGrandchildren: a shell that started a background child is
// killed as a tree, so the child holding stdout ends too and Wait returns.
func TestKillEndsTheGrandchildren(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the Windows job object is checked by building for windows (.ci/run); this test drives /bin/sh")
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	cmd := exec.Command("/bin/sh", "-c", "sleep 60 & echo $! > "+pidFile+"; wait")
	tree := New(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if err := tree.Started(); err != nil {
		t.Fatal(err)
	}
	defer tree.Close()
	var pid string
	for deadline := time.Now().Add(10 * time.Second); pid == ""; {
		b, _ := os.ReadFile(pidFile)
		pid = strings.TrimSpace(string(b))
		if pid == "" && time.Now().After(deadline) {
			t.Fatal("the background child never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := tree.Kill(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the shell outlived Kill")
	}
	// The grandchild was reparented when the shell died; kill(pid, 0) fails
	// once it is gone (and reaped by init).
	for deadline := time.Now().Add(10 * time.Second); ; {
		if err := exec.Command("kill", "-0", pid).Run(); err != nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("background child %s outlived Kill", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
