package rawio

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A Stater on a local file system stats raw, and answers what os.Stat does:
// the size and modification time, and a missing file as not existing.
func TestStaterAgreesWithOSStat(t *testing.T) {
	dir := t.TempDir()
	s := NewStater(dir)
	if !s.raw.Load() {
		t.Skip("the test's temporary directory is not on a file system the Stater stats raw")
	}
	path := filepath.Join(dir, ".pml.json")
	if err := os.WriteFile(path, []byte(`{"a":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	mod := time.Date(2026, 11, 28, 12, 0, 0, 123456789, time.UTC)
	if err := os.Chtimes(path, mod, mod); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	size, got, err := s.Stat(path)
	if err != nil || size != fi.Size() || !got.Equal(fi.ModTime()) {
		t.Errorf("Stat = %d, %v, %v; os.Stat: %d, %v", size, got, err, fi.Size(), fi.ModTime())
	}
	if _, _, err := s.Stat(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Stat of a missing file: %v, want not exist", err)
	}
	if !s.raw.Load() {
		t.Error("the Stater fell back to os.Stat")
	}
}

// /proc is not a local disk file system: its Stater uses os.Stat.
func TestStaterKeepsOSStatElsewhere(t *testing.T) {
	s := NewStater("/proc")
	if s.raw.Load() {
		t.Fatal("a Stater on /proc stats raw")
	}
	if size, _, err := s.Stat("/proc/self/stat"); err != nil || size != 0 {
		t.Errorf("Stat(/proc/self/stat) = %d, %v", size, err)
	}
}
