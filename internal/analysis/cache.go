package analysis

import (
	"container/list"
	"crypto/sha256"
	"maps"
	"sync"

	"github.com/pml-go/pml/internal/pmlerr"
)

// maxCacheBytes bounds the memory an Analyzer's cache holds, whatever its
// entry count: 4096 entries of hostile 100 KiB snippets would otherwise hold
// more than a gigabyte.
const maxCacheBytes = 64 << 20

// Analyzer analyses code through a bounded LRU cache keyed by the SHA-256 of
// the code. It is safe for concurrent use.
type Analyzer struct {
	max      int
	maxBytes int
	mu       sync.Mutex
	order    *list.List // of *entry, most recently used first
	entries  map[[32]byte]*list.Element
	bytes    int
}

// entry is one cached outcome: an analysis or the error code got.
type entry struct {
	key  [32]byte
	a    *Analysis
	err  *pmlerr.Error
	size int
}

// New returns an Analyzer that keeps up to cacheEntries results (and at
// most 64 MiB of them); zero or less disables the cache.
func New(cacheEntries int) *Analyzer {
	return &Analyzer{max: cacheEntries, maxBytes: maxCacheBytes, order: list.New(), entries: map[[32]byte]*list.Element{}}
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
	e := &entry{key: key, a: a, size: 256}
	if err != nil {
		pe, ok := pmlerr.As(err)
		if !ok || pe.Code == pmlerr.Internal {
			return nil, err // not a property of the code: do not remember it
		}
		e.err = pe
	} else {
		e.size += a.size()
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
	z.bytes += e.size
	for z.order.Len() > z.max || (z.bytes > z.maxBytes && z.order.Len() > 1) {
		oldest := z.order.Remove(z.order.Back()).(*entry)
		delete(z.entries, oldest.key)
		z.bytes -= oldest.size
	}
	return e
}

// Len is the number of cached results.
func (z *Analyzer) Len() int {
	z.mu.Lock()
	defer z.mu.Unlock()
	return z.order.Len()
}

// size estimates the memory an analysis holds.
func (a *Analysis) size() int {
	n := len(a.JS) + len(a.mappings) + len(a.origin.text) + 8*len(a.origin.starts) + len(a.ArgsSchema)
	for _, node := range a.Structure.Nodes {
		n += 128 + len(node.Args) + len(node.Condition)
	}
	n += 64 * len(a.Structure.Edges)
	for _, t := range a.DAG.Tasks {
		n += 96 + 16*len(t.DependsOn)
	}
	return n
}
