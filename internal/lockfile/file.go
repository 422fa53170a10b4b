package lockfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/pml-go/pml/internal/atomicfile"
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
	if e.Content != "" && fqdn.Hash4(e.Content) == "" {
		return fmt.Errorf("malformed content hash %q", e.Content)
	}
	return nil
}

// write replaces the file at path with snap, durably and atomically: a
// reader or a crash sees either the old content or the new, never a mix.
func write(path string, snap snapshot) error {
	data, err := json.MarshalIndent(document{Version: formatVersion, Entries: snap.entries}, "", "  ")
	if err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	return atomicfile.Write(path, append(data, '\n'), atomicfile.Durable)
}
