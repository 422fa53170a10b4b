package gateway

import (
	"sync"
	"time"
)

// ttlCache remembers values briefly. Entries expire, so a change made on
// another replica is seen within the TTL (caches here are allowed to be
// stale only that long); size is bounded: a full cache starts over.
type ttlCache[K comparable, V any] struct {
	ttl  time.Duration
	size int

	mu      sync.Mutex
	entries map[K]ttlEntry[V]
}

type ttlEntry[V any] struct {
	value   V
	expires time.Time
}

func newTTLCache[K comparable, V any](ttl time.Duration, size int) *ttlCache[K, V] {
	return &ttlCache[K, V]{ttl: ttl, size: size, entries: map[K]ttlEntry[V]{}}
}

func (c *ttlCache[K, V]) get(k K, now time.Time) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[k]
	if !ok || now.After(e.expires) {
		var zero V
		return zero, false
	}
	return e.value, true
}

func (c *ttlCache[K, V]) put(k K, v V, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= c.size {
		c.entries = map[K]ttlEntry[V]{}
	}
	c.entries[k] = ttlEntry[V]{value: v, expires: now.Add(c.ttl)}
}
