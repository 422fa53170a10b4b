// Package ttlcache remembers values briefly. Entries expire, so a change
// made on another replica is seen within the TTL (the caches built on it may
// be stale only that long); the entry count is bounded: a full cache starts
// over, which costs a few store reads but never lets hostile keys grow it.
package ttlcache

import (
	"sync"
	"time"
)

// Cache maps keys to values for a TTL. It is safe for concurrent use. The
// zero value stores nothing; call New.
type Cache[K comparable, V any] struct {
	ttl  time.Duration
	size int

	mu      sync.Mutex
	entries map[K]entry[V]
}

type entry[V any] struct {
	value   V
	expires time.Time
}

// New returns a cache keeping each value for ttl, holding at most size
// entries. A ttl or size of zero or less disables it: Put stores nothing.
func New[K comparable, V any](ttl time.Duration, size int) *Cache[K, V] {
	return &Cache[K, V]{ttl: ttl, size: size}
}

// Get returns the value of k stored less than the TTL before now.
func (c *Cache[K, V]) Get(k K, now time.Time) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[k]
	if !ok || now.After(e.expires) {
		var zero V
		return zero, false
	}
	return e.value, true
}

// Put stores v under k as of now.
func (c *Cache[K, V]) Put(k K, v V, now time.Time) {
	if c.ttl <= 0 || c.size <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= c.size {
		c.entries = make(map[K]entry[V], min(c.size, 64))
	}
	c.entries[k] = entry[V]{value: v, expires: now.Add(c.ttl)}
}

// Delete forgets k, for a change to it.
func (c *Cache[K, V]) Delete(k K) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries, k)
}

// Clear forgets everything, for a change that any entry may reflect.
func (c *Cache[K, V]) Clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries = nil
}

// Len is the number of entries held, expired ones included until the cache
// starts over.
func (c *Cache[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}
