package lockfile

import (
	"strings"

	"github.com/pml-go/pml/internal/registry/fqdn"
)

// snapshot is the content of the file with each entry's four-part base
// indexed both ways; the file holds at most one entry per base.
type snapshot struct {
	entries map[string]Entry  // five-part FQDN -> entry
	baseOf  map[string]string // five-part FQDN -> four-part base
	keyOf   map[string]string // four-part base -> five-part FQDN
}

func newSnapshot() snapshot {
	return snapshot{entries: map[string]Entry{}, baseOf: map[string]string{}, keyOf: map[string]string{}}
}

// put records e under n, replacing any entry of the same base.
func (s snapshot) put(n fqdn.Name, e Entry) {
	if old, ok := s.keyOf[n.Base()]; ok {
		s.remove(old)
	}
	key := n.String()
	s.entries[key] = e
	s.baseOf[key] = n.Base()
	s.keyOf[n.Base()] = key
}

func (s snapshot) remove(key string) {
	delete(s.keyOf, s.baseOf[key])
	delete(s.baseOf, key)
	delete(s.entries, key)
}

func (s snapshot) anyRejected(keep func(string) bool) bool {
	for _, base := range s.baseOf {
		if !keep(base) {
			return true
		}
	}
	return false
}

// hashOf returns the hash part of a stored five-part key.
func (s snapshot) hashOf(key string) string {
	return key[strings.LastIndexByte(key, '.')+1:]
}
