package lockfile

import (
	"fmt"

	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/registry/fqdn"
)

// CheckResult is how a fetched integrity compares with the lockfile.
type CheckResult int

const (
	// New: nothing is recorded for this four-part name; record it.
	New CheckResult = iota
	// Match: the recorded integrity is the fetched one.
	Match
	// Mismatch: another integrity is recorded; the user must approve the
	// change before it is recorded, else it is an INTEGRITY_ERROR.
	Mismatch
)

func (r CheckResult) String() string {
	switch r {
	case New:
		return "new"
	case Match:
		return "match"
	case Mismatch:
		return "mismatch"
	}
	return fmt.Sprintf("CheckResult(%d)", int(r))
}

// MismatchInfo describes a changed integrity: what the "integrity" approval
// request shows the user.
type MismatchInfo struct {
	FQDN         string // the fetched five-part name
	Base         string // the four-part name both versions share
	OldHash      string
	NewHash      string
	OldIntegrity string
	NewIntegrity string
	OldContent   string // the entries' Content pins, when they have one
	NewContent   string
	OldFetchedAt string
}

// Description is the approval request's text.
func (m *MismatchInfo) Description() string {
	if m.OldIntegrity == m.NewIntegrity {
		old, cur := Entry{Integrity: m.OldIntegrity, Content: m.OldContent}, Entry{Integrity: m.NewIntegrity, Content: m.NewContent}
		return fmt.Sprintf("Content changed for %s under the same integrity %s. Old content: %s, New: %s. This could indicate a legitimate update or potential MITM attack.",
			m.Base, m.NewIntegrity, old.content(), cur.content())
	}
	return fmt.Sprintf("Hash changed for %s. Old: %s, New: %s. This could indicate a legitimate update or potential MITM attack.",
		m.Base, m.OldHash, m.NewHash)
}

// Check compares a fetched integrity with the entry recorded for the same
// four-part name: a new version of a thing has a new five-part name, so the
// lookup ignores the hash. name may be four- or five-part; a five-part name
// whose hash contradicts integrity is an INTEGRITY_ERROR, since the registry
// then served content that is not what it named.
func (l *Lockfile) Check(name, integrity string) (CheckResult, *MismatchInfo, error) {
	return l.CheckEntry(name, Entry{Integrity: integrity})
}

// CheckEntry is Check for a fetched entry that may pin its content apart
// from its integrity (Entry.Content): a different integrity or a different
// content is a Mismatch.
func (l *Lockfile) CheckEntry(name string, fetched Entry) (CheckResult, *MismatchInfo, error) {
	integrity := fetched.Integrity
	n, err := parseFetched(name, integrity)
	if err != nil {
		return 0, nil, err
	}
	l.mu.Lock()
	err = l.refreshLocked()
	snap := l.snap
	l.mu.Unlock()
	if err != nil {
		return 0, nil, err
	}
	key, ok := snap.keyOf[n.Base()]
	if !ok {
		return New, nil, nil
	}
	old := snap.entries[key]
	if old.Integrity == integrity && old.content() == fetched.content() {
		return Match, nil, nil
	}
	newHash := n.Hash
	if newHash == "" {
		newHash = fqdn.Hash4(integrity)
	}
	return Mismatch, &MismatchInfo{
		FQDN:         n.WithHash(newHash).String(),
		Base:         n.Base(),
		OldHash:      snap.hashOf(key),
		NewHash:      newHash,
		OldIntegrity: old.Integrity,
		NewIntegrity: integrity,
		OldContent:   old.Content,
		NewContent:   fetched.Content,
		OldFetchedAt: old.FetchedAt,
	}, nil
}

// parseFetched validates a name and the integrity fetched for it.
func parseFetched(name, integrity string) (fqdn.Name, error) {
	n, err := fqdn.Parse(name)
	if err != nil {
		return fqdn.Name{}, pmlerr.Wrap(pmlerr.InvalidRequest, err)
	}
	if integrity == "" {
		return fqdn.Name{}, pmlerr.New(pmlerr.IntegrityError, "no integrity value for %s", name)
	}
	if h := fqdn.Hash4(integrity); n.Hash != "" && h != "" && h != n.Hash {
		return fqdn.Name{}, pmlerr.New(pmlerr.IntegrityError,
			"%s: content integrity %s has hash %s, not %s", name, integrity, h, n.Hash).
			With("fqdn", name).With("integrity", integrity)
	}
	return n, nil
}
