// Package lru is a bounded least-recently-used cache, limited both by entry
// count and by the memory its entries hold (as the caller estimates it), so
// that a flood of large hostile inputs cannot grow it without end.
package lru

import (
	"container/list"
	"sync"
)

// Cache maps keys to values, dropping the least recently used entries beyond
// its limits. It is safe for concurrent use. The zero value is not usable;
// call New.
type Cache[K comparable, V any] struct {
	maxEntries int
	maxBytes   int
	mu         sync.Mutex
	order      *list.List // of *entry[K, V], most recently used first
	entries    map[K]*list.Element
	bytes      int
}

type entry[K comparable, V any] struct {
	key   K
	value V
	size  int
}

// New returns a cache of at most maxEntries entries holding at most maxBytes
// of them (the most recent entry stays even when it alone is larger).
// maxEntries of zero or less disables the cache: Add stores nothing.
func New[K comparable, V any](maxEntries, maxBytes int) *Cache[K, V] {
	return &Cache[K, V]{maxEntries: maxEntries, maxBytes: maxBytes, order: list.New(), entries: map[K]*list.Element{}}
}

// Get returns the value of key and marks it the most recently used.
func (c *Cache[K, V]) Get(key K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok {
		var zero V
		return zero, false
	}
	c.order.MoveToFront(el)
	return el.Value.(*entry[K, V]).value, true
}

// Add stores value under key, counting size bytes for it, unless another
// caller stored that key first; it returns the stored value, so that
// concurrent callers computing the same key share one result.
func (c *Cache[K, V]) Add(key K, value V, size int) V {
	if c.maxEntries <= 0 {
		return value
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[key]; ok {
		c.order.MoveToFront(el)
		return el.Value.(*entry[K, V]).value
	}
	c.entries[key] = c.order.PushFront(&entry[K, V]{key: key, value: value, size: size})
	c.bytes += size
	for c.order.Len() > c.maxEntries || (c.bytes > c.maxBytes && c.order.Len() > 1) {
		oldest := c.order.Remove(c.order.Back()).(*entry[K, V])
		delete(c.entries, oldest.key)
		c.bytes -= oldest.size
	}
	return value
}

// Len is the number of cached entries.
func (c *Cache[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
