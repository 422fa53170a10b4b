package lockfile

import (
	"time"

	"github.com/pml-go/pml/internal/pmlerr"
)

// Record stores e under the five-part name, replacing the entry of any other
// version of the same four-part name, and saves the file. It is how a first
// fetch and an approved change are remembered. An empty
// FetchedAt is set to now.
func (l *Lockfile) Record(name string, e Entry) error {
	n, err := parseFetched(name, e.Integrity)
	if err != nil {
		return err
	}
	if n.Hash == "" {
		return pmlerr.New(pmlerr.InvalidRequest, "lockfile: record %s: want a five-part name with its hash", name)
	}
	if e.FetchedAt == "" {
		e.FetchedAt = time.Now().UTC().Format(time.RFC3339)
	}
	if e.Content == e.Integrity {
		e.Content = "" // the integrity pins the content already
	}
	if err := checkEntry(n, e); err != nil {
		return pmlerr.New(pmlerr.IntegrityError, "lockfile: record %s: %v", name, err)
	}
	return l.update(func(s snapshot) bool {
		if key, ok := s.keyOf[n.Base()]; ok && key == name && s.entries[key] == e {
			return false
		}
		s.put(n, e)
		return true
	})
}
