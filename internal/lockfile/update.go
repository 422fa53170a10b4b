package lockfile

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/pml-go/pml/internal/filelock"
)

// update applies mutate to the file's current content and saves the result
// if mutate reports a change. It holds the workspace's exclusive file lock
// from the read to the rename, so a concurrent writer (another Lockfile or
// another process) either sees this change or is seen by it.
func (l *Lockfile) update(mutate func(snapshot) bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := os.MkdirAll(filepath.Dir(l.path), 0o755); err != nil {
		return fmt.Errorf("lockfile %s: %w", l.path, err)
	}
	unlock, err := filelock.Lock(l.path + ".lk")
	if err != nil {
		return fmt.Errorf("lockfile %s: lock: %w", l.path, err)
	}
	defer unlock()

	snap, seen, err := read(l.path)
	if err != nil {
		return err
	}
	if !mutate(snap) {
		l.snap, l.seen = snap, seen
		return nil
	}
	if err := write(l.path, snap); err != nil {
		return fmt.Errorf("lockfile %s: write: %w", l.path, err)
	}
	// Nobody else can replace the file while the lock is held.
	if seen, err = os.Stat(l.path); err != nil {
		return fmt.Errorf("lockfile %s: %w", l.path, err)
	}
	l.snap, l.seen = snap, seen
	return nil
}
