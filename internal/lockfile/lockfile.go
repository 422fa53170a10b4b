// Package lockfile keeps the client's record of the integrity of every registry
// entry it has fetched, in ${workspace}/.pml/mcp.lock (docs/how-it-works.md,
// Registry). The first fetch of a thing is trusted and recorded; later fetches
// are checked against the record, and a different integrity for the same
// four-part name needs the user's approval before it replaces the record.
//
// Several pml processes may share a workspace, so every change is a
// read-modify-write under an exclusive lock on .pml/mcp.lock.lk, and the file
// is replaced atomically: readers never see a partial file and writers never
// lose each other's entries.
package lockfile

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"sync"

	"github.com/pml-go/pml/internal/registry/fqdn"
)

// Where the lockfile lives inside a workspace.
const (
	DirName  = ".pml"
	FileName = "mcp.lock"
)

// ErrCorrupt is wrapped when the lockfile cannot be understood. The file is
// then left as it is: wiping it would silently drop every integrity record.
var ErrCorrupt = errors.New("corrupted lockfile")

// Entry is what the lockfile records for one fetched registry entry.
type Entry struct {
	Integrity string `json:"integrity"`         // "sha256-…" (or a package's SRI value)
	FetchedAt string `json:"fetchedAt"`         // RFC 3339, UTC
	Type      string `json:"type,omitempty"`    // "code", "stdio" or "http"
	Routing   string `json:"routing,omitempty"` // "client" or "server"
	// Content is the "sha256-…" of the content the package acts on (the
	// canonical metadata of a server entry) when Integrity is not itself
	// that hash: a package's own SRI integrity names the package, not the
	// command line that installs it, so a changed command under the same
	// integrity is still a change. Empty when Integrity is that hash.
	Content string `json:"content,omitempty"`
}

// content is what e pins its content to.
func (e Entry) content() string {
	if e.Content != "" {
		return e.Content
	}
	return e.Integrity
}

// Lockfile is one workspace's mcp.lock. It is safe for concurrent use, and
// other Lockfile values or processes may change the same file: reads pick up
// their changes, writes merge with them.
type Lockfile struct {
	path string

	mu   sync.Mutex
	snap snapshot    // the file as last read or written
	seen os.FileInfo // that file's identity; nil when it did not exist
}

// Open loads ${workspace}/.pml/mcp.lock (a missing file is an empty
// lockfile) and drops the entries whose four-part base keep rejects — things
// no longer in the permissions' allow or ask lists — saving the file
// if that removed anything. keep == nil keeps everything; keep runs while
// the file is locked and must not use the Lockfile.
func Open(workspace string, keep func(fqdnBase string) bool) (*Lockfile, error) {
	if workspace == "" {
		return nil, errors.New("lockfile: empty workspace path")
	}
	l := &Lockfile{path: filepath.Join(workspace, DirName, FileName)}
	snap, info, err := read(l.path)
	if err != nil {
		return nil, err
	}
	l.snap, l.seen = snap, info
	if keep == nil || !snap.anyRejected(keep) {
		return l, nil
	}
	err = l.update(func(s snapshot) bool {
		removed := false
		for key, base := range s.baseOf {
			if !keep(base) {
				s.remove(key)
				removed = true
			}
		}
		return removed
	})
	if err != nil {
		return nil, fmt.Errorf("lockfile %s: cleanup: %w", l.path, err)
	}
	return l, nil
}

// Path returns the lockfile's path.
func (l *Lockfile) Path() string { return l.path }

// Get returns the entry for a five-part FQDN (only that exact version) or a
// four-part one (whatever version is recorded).
func (l *Lockfile) Get(name string) (Entry, bool) {
	n, err := fqdn.Parse(name)
	if err != nil {
		return Entry{}, false
	}
	snap := l.current()
	key, ok := snap.keyOf[n.Base()]
	if !ok || (n.Hash != "" && key != name) {
		return Entry{}, false
	}
	return snap.entries[key], true
}

// Entries returns a copy of all entries, keyed by five-part FQDN.
func (l *Lockfile) Entries() map[string]Entry {
	return maps.Clone(l.current().entries)
}

// current returns the latest readable state of the file. Get and Entries have
// no error to return, so when the file has become unreadable they log and
// answer from the last good state; Check and Record report the error.
func (l *Lockfile) current() snapshot {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.refreshLocked(); err != nil {
		slog.Warn("lockfile unreadable; using last good state", "path", l.path, "err", err)
	}
	return l.snap
}

// refreshLocked re-reads the file when it was replaced or changed since it was
// last seen. Every write renames a new file into place, so identity, size and
// modification time together tell whether a re-read is needed.
func (l *Lockfile) refreshLocked() error {
	info, err := os.Stat(l.path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if l.seen == nil {
			return nil
		}
	case err != nil:
		return fmt.Errorf("lockfile %s: %w", l.path, err)
	case l.seen != nil && os.SameFile(info, l.seen) && info.Size() == l.seen.Size() && info.ModTime().Equal(l.seen.ModTime()):
		return nil
	}
	snap, seen, err := read(l.path)
	if err != nil {
		return err
	}
	l.snap, l.seen = snap, seen
	return nil
}
