package client

import (
	"time"

	"github.com/pml-go/pml/internal/approval"
	"github.com/pml-go/pml/internal/lockfile"
)

// MismatchError is a fetched entry whose integrity differs from what the
// lockfile recorded for the same four-part name: a legitimate update
// or a tampered registry, for the person to decide through an "integrity"
// approval (Item). Approving records Entry (lockfile.Record); rejecting is
// an INTEGRITY_ERROR.
type MismatchError struct {
	Info  lockfile.MismatchInfo
	Entry Entry
}

func (m *MismatchError) Error() string { return m.Info.Description() }

// Item is the approval to ask for. Its integrity map carries what accepting
// needs to record: fqdn (five-part), integrity, type and routing.
func (m *MismatchError) Item() approval.Item {
	fetched, _ := time.Parse(time.RFC3339, m.Info.OldFetchedAt)
	it := approval.IntegrityItem(m.Info.Base, m.Info.OldHash, m.Info.NewHash, fetched)
	it.Integrity["fqdn"], it.Integrity["integrity"] = m.Entry.FQDN, m.Entry.Integrity
	it.Integrity["type"], it.Integrity["routing"] = string(m.Entry.Type), m.Entry.Routing
	it.Integrity["content"] = m.Entry.Content
	return it
}

// Check compares a fetched entry with the lockfile: the first fetch of a
// name is recorded, the same integrity and content pass, anything else
// is a *MismatchError and nothing is recorded.
func Check(lf *lockfile.Lockfile, e Entry) error {
	rec := lockEntry(e)
	res, mm, err := lf.CheckEntry(e.FQDN, rec)
	switch {
	case err != nil:
		return err
	case res == lockfile.New:
		return lf.Record(e.FQDN, rec)
	case res == lockfile.Mismatch:
		return &MismatchError{Info: *mm, Entry: e}
	}
	return nil
}

// lockEntry is what the lockfile records for e.
func lockEntry(e Entry) lockfile.Entry {
	return lockfile.Entry{Integrity: e.Integrity, Content: e.Content, Type: string(e.Type), Routing: e.Routing}
}

// Accept records the entry an approved integrity item (Item) stands for.
func Accept(lf *lockfile.Lockfile, it approval.Item) error {
	str := func(k string) string { s, _ := it.Integrity[k].(string); return s }
	return lf.Record(str("fqdn"), lockfile.Entry{Integrity: str("integrity"), Content: str("content"), Type: str("type"), Routing: str("routing")})
}
