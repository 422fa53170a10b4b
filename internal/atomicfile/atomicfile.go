// Package atomicfile replaces a file so that readers see the old content or
// the new, never a mix: the data goes to a temporary file in the same
// directory, which is then renamed over the target.
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// Durability says whether a write must survive a power cut.
type Durability bool

const (
	// Fast survives a crash of the process (the kernel has the data) but not
	// a power cut: no fsync, for files written on a hot path or caches.
	Fast Durability = false
	// Durable fsyncs the file and its directory before returning.
	Durable Durability = true
)

// Write replaces path with data (mode 0644), creating its directory.
func Write(path string, data []byte, d Durability) error {
	return WriteMode(path, data, d, 0o644)
}

// WriteMode is Write with the file's mode, which it has before it is
// renamed into place (a file holding a secret is never readable by others,
// even for a moment).
func WriteMode(path string, data []byte, d Durability, mode os.FileMode) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	// The ".tmp-" infix marks leftovers of a crash mid-write.
	tmp, err := os.CreateTemp(dir, filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
			err = fmt.Errorf("write %s: %w", path, err)
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	if err = tmp.Chmod(mode); err != nil {
		return err
	}
	if d == Durable {
		if err = tmp.Sync(); err != nil {
			return err
		}
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	if d == Durable {
		return syncDir(dir)
	}
	return nil
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
