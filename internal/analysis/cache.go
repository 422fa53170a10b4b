package analysis

import (
	"crypto/sha256"
	"maps"

	"github.com/pml-go/pml/internal/lru"
	"github.com/pml-go/pml/internal/pmlerr"
)

// maxCacheBytes bounds the memory an Analyzer's cache holds, whatever its
// entry count: 4096 entries of hostile 100 KiB snippets would otherwise hold
// more than a gigabyte.
const maxCacheBytes = 64 << 20

// Analyzer analyses code through a bounded LRU cache keyed by the SHA-256 of
// the code. It is safe for concurrent use.
type Analyzer struct {
	cache *lru.Cache[[32]byte, *entry]
}

// entry is one cached outcome: an analysis or the error code got.
type entry struct {
	a   *Analysis
	err *pmlerr.Error
}

// New returns an Analyzer that keeps up to cacheEntries results (and at
// most 64 MiB of them); zero or less disables the cache.
func New(cacheEntries int) *Analyzer {
	return &Analyzer{cache: lru.New[[32]byte, *entry](cacheEntries, maxCacheBytes)}
}

// Analyze is the package Analyze, cached: the same code yields the same
// *Analysis (shared: read-only) while it stays in the cache. Errors are cached
// too; each caller gets its own copy, free to add details.
func (z *Analyzer) Analyze(code string) (*Analysis, error) {
	if err := checkSize(code); err != nil { // no hashing of oversized input
		return nil, err
	}
	key := sha256.Sum256([]byte(code))
	if e, ok := z.cache.Get(key); ok {
		return e.result()
	}
	a, err := analyze(code, key)
	e, size := &entry{a: a}, 256
	if err != nil {
		pe, ok := pmlerr.As(err)
		if !ok || pe.Code == pmlerr.Internal {
			return nil, err // not a property of the code: do not remember it
		}
		e.err = pe
	} else {
		size += a.size()
	}
	return z.cache.Add(key, e, size).result()
}

func (e *entry) result() (*Analysis, error) {
	if e.err != nil {
		c := *e.err
		c.Details = maps.Clone(e.err.Details)
		return nil, &c
	}
	return e.a, nil
}

// Len is the number of cached results.
func (z *Analyzer) Len() int { return z.cache.Len() }

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
