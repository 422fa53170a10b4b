package client

import (
	"time"

	"github.com/pml-go/pml/internal/approval"
	"github.com/pml-go/pml/internal/lockfile"
	"github.com/pml-go/pml/internal/pmlerr"
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

// Item is the approval to ask for. Its integrity record carries what
// accepting needs to record: the fetched entry under its five-part name.
func (m *MismatchError) Item() approval.Item {
	fetched, _ := time.Parse(time.RFC3339, m.Info.OldFetchedAt)
	it := approval.IntegrityItem(m.Info.Base, m.Info.OldHash, m.Info.NewHash, fetched)
	in := it.Integrity
	in.FQDN, in.Integrity, in.Content = m.Entry.FQDN, m.Entry.Integrity, m.Entry.Content
	in.Type, in.Routing = string(m.Entry.Type), m.Entry.Routing
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
	in := it.Integrity
	if in == nil {
		return pmlerr.New(pmlerr.Internal, "accepting a %s item as an integrity change", it.Type)
	}
	return lf.Record(in.FQDN, lockfile.Entry{Integrity: in.Integrity, Content: in.Content, Type: in.Type, Routing: in.Routing})
}
