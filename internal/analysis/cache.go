package analysis

import (
	"container/list"
	"crypto/sha256"
	"maps"
	"sync"

	"github.com/pml-go/pml/internal/pmlerr"
)

// Analyzer analyses code through a bounded LRU cache keyed by the SHA-256 of
// the code. It is safe for concurrent use.
type Analyzer struct {
	max     int
	mu      sync.Mutex
	order   *list.List // of *entry, most recently used first
	entries map[[32]byte]*list.Element
}

// entry is one cached outcome: an analysis or the error code got.
type entry struct {
	key [32]byte
	a   *Analysis
	err *pmlerr.Error
}

// New returns an Analyzer that keeps up to cacheEntries results; zero or
// less disables the cache.
func New(cacheEntries int) *Analyzer {
	return &Analyzer{max: cacheEntries, order: list.New(), entries: map[[32]byte]*list.Element{}}
}

// Analyze is the package Analyze, cached: the same code yields the same
// *Analysis (shared: read-only) while it stays in the cache. Errors are cached
// too; each caller gets its own copy, free to add details.
func (z *Analyzer) Analyze(code string) (*Analysis, error) {
	if err := checkSize(code); err != nil { // no hashing of oversized input
		return nil, err
	}
	key := sha256.Sum256([]byte(code))
	if e, ok := z.get(key); ok {
		return e.result()
	}
	a, err := analyze(code, key)
	e := &entry{key: key, a: a}
	if err != nil {
		pe, ok := pmlerr.As(err)
		if !ok || pe.Code == pmlerr.Internal {
			return nil, err // not a property of the code: do not remember it
		}
		e.err = pe
	}
	return z.put(e).result()
}

func (e *entry) result() (*Analysis, error) {
	if e.err != nil {
		c := *e.err
		c.Details = maps.Clone(e.err.Details)
		return nil, &c
	}
	return e.a, nil
}

func (z *Analyzer) get(key [32]byte) (*entry, bool) {
	z.mu.Lock()
	defer z.mu.Unlock()
	el, ok := z.entries[key]
	if !ok {
		return nil, false
	}
	z.order.MoveToFront(el)
	return el.Value.(*entry), true
}

// put stores e unless another caller stored the same code first, and
// returns the stored entry so that concurrent callers share one result.
func (z *Analyzer) put(e *entry) *entry {
	if z.max <= 0 {
		return e
	}
	z.mu.Lock()
	defer z.mu.Unlock()
	if el, ok := z.entries[e.key]; ok {
		z.order.MoveToFront(el)
		return el.Value.(*entry)
	}
	z.entries[e.key] = z.order.PushFront(e)
	for z.order.Len() > z.max {
		oldest := z.order.Back()
		z.order.Remove(oldest)
		delete(z.entries, oldest.Value.(*entry).key)
	}
	return e
}

// Len is the number of cached results.
func (z *Analyzer) Len() int {
	z.mu.Lock()
	defer z.mu.Unlock()
	return z.order.Len()
}
