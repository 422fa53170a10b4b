//go:build windows

package lockfile

import (
	"os"

	"golang.org/x/sys/windows"
)

// lockExclusive blocks until it holds an exclusive lock on path, creating the
// file if needed.
func lockExclusive(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	var ol windows.Overlapped
	if err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK, 0, 1, 0, &ol); err != nil {
		f.Close()
		return nil, err
	}
	// Closing the handle releases the lock.
	return func() { f.Close() }, nil
}

// syncDir is a no-op: Windows cannot open a directory for flushing, and NTFS
// journals the rename itself.
func syncDir(string) error { return nil }
