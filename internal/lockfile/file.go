package lockfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/pml-go/pml/internal/registry/fqdn"
)

// formatVersion is the only "version" this package reads and writes.
const formatVersion = 1

// document is the JSON layout of mcp.lock.
type document struct {
	Version int              `json:"version"`
	Entries map[string]Entry `json:"entries"`
}

// read loads the file at path. A missing file is an empty snapshot and a nil
// FileInfo; anything unreadable is an error naming the file.
func read(path string) (snapshot, os.FileInfo, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return newSnapshot(), nil, nil
	}
	if err != nil {
		return snapshot{}, nil, fmt.Errorf("lockfile %s: %w", path, err)
	}
	defer f.Close()
	// Stat the open file, not the path, so the identity matches the bytes read.
	info, err := f.Stat()
	if err != nil {
		return snapshot{}, nil, fmt.Errorf("lockfile %s: %w", path, err)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return snapshot{}, nil, fmt.Errorf("lockfile %s: %w", path, err)
	}
	snap, err := decode(data)
	if err != nil {
		return snapshot{}, nil, fmt.Errorf("lockfile %s: %w: %v (fix or delete the file; it is left untouched)", path, ErrCorrupt, err)
	}
	return snap, info, nil
}

func decode(data []byte) (snapshot, error) {
	var doc document
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		return snapshot{}, fmt.Errorf("invalid JSON: %v", err)
	}
	if dec.More() {
		return snapshot{}, errors.New("invalid JSON: data after the top-level object")
	}
	if doc.Version != formatVersion {
		return snapshot{}, fmt.Errorf("unsupported version %d (want %d)", doc.Version, formatVersion)
	}
	snap := newSnapshot()
	for key, e := range doc.Entries {
		n, err := fqdn.Parse(key)
		if err != nil {
			return snapshot{}, fmt.Errorf("entry key: %v", err)
		}
		if err := checkEntry(n, e); err != nil {
			return snapshot{}, fmt.Errorf("entry %q: %v", key, err)
		}
		if other, dup := snap.keyOf[n.Base()]; dup {
			return snapshot{}, fmt.Errorf("entries %q and %q are versions of the same %s", other, key, n.Base())
		}
		snap.put(n, e)
	}
	return snap, nil
}

// checkEntry holds for everything stored: a five-part name whose hash is the
// one its integrity implies (when the integrity's form lets us compute it).
func checkEntry(n fqdn.Name, e Entry) error {
	if n.Hash == "" {
		return errors.New("name has no hash")
	}
	if e.Integrity == "" {
		return errors.New("empty integrity")
	}
	if h := fqdn.Hash4(e.Integrity); h != "" && h != n.Hash {
		return fmt.Errorf("hash %s does not match integrity %s (hash %s)", n.Hash, e.Integrity, h)
	}
	return nil
}

// write replaces the file at path with snap: a temporary file in the same
// directory, fsynced, then renamed over the old one, so a reader or a crash
// sees either the old content or the new, never a mix.
func write(path string, snap snapshot) (err error) {
	data, err := json.MarshalIndent(document{Version: formatVersion, Entries: snap.entries}, "", "  ")
	if err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	data = append(data, '\n')
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	if err = tmp.Chmod(0o644); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	return syncDir(dir)
}
