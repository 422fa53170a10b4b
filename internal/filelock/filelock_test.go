package filelock

import (
	"errors"
	"path/filepath"
	"testing"
	"time"
)

func TestTryLockSeesAHolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	unlock, err := Lock(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := TryLock(path); !errors.Is(err, ErrLocked) {
		t.Fatalf("TryLock while held: %v; want ErrLocked", err)
	}
	unlock()
	unlock2, err := TryLock(path)
	if err != nil {
		t.Fatalf("TryLock after release: %v", err)
	}
	unlock2()
}

func TestLockWaitsForTheHolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	unlock, err := Lock(path)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan time.Time)
	go func() {
		u, err := Lock(path)
		if err != nil {
			t.Error(err)
		}
		got <- time.Now()
		u()
	}()
	time.Sleep(50 * time.Millisecond)
	released := time.Now()
	unlock()
	if at := <-got; at.Before(released) {
		t.Error("second Lock returned while the first held the lock")
	}
}
