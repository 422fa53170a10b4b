// Package filelock takes exclusive advisory locks on files, between
// processes and between opens in one process alike (the lock belongs to the
// open file). Closing the file, or the process ending, releases it.
package filelock

import (
	"errors"
	"fmt"
	"os"
)

// ErrLocked is TryLock's answer when another open holds the lock.
var ErrLocked = errors.New("file is locked by another process")

// Lock blocks until it holds the lock on path, creating the file if needed.
func Lock(path string) (unlock func(), err error) { return lock(path, true) }

// TryLock takes the lock on path, creating the file if needed, or fails at
// once with ErrLocked.
func TryLock(path string) (unlock func(), err error) { return lock(path, false) }

func lock(path string, wait bool) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := lockFile(f, wait); err != nil {
		f.Close()
		if errors.Is(err, ErrLocked) {
			return nil, err
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() { f.Close() }, nil
}
