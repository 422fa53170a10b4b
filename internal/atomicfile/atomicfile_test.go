package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteReplacesWholeFile(t *testing.T) {
	for _, d := range []Durability{Fast, Durable} {
		dir := t.TempDir()
		path := filepath.Join(dir, "sub", "f.json")
		if err := Write(path, []byte("old"), d); err != nil {
			t.Fatal(err)
		}
		if err := Write(path, []byte("new"), d); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != "new" {
			t.Fatalf("%q %v", got, err)
		}
		entries, _ := os.ReadDir(filepath.Dir(path))
		if len(entries) != 1 {
			t.Fatalf("temporary files left: %v", entries)
		}
	}
}

func TestWriteFailsClearly(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(filepath.Join(blocker, "x"), []byte("y"), Fast); err == nil {
		t.Fatal("wrote under a regular file")
	}
}
