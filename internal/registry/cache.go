package registry

import (
	"sync"
	"time"

	"github.com/pml-go/pml/internal/store"
)

// DefaultCacheTTL bounds how long a capability lookup is reused. Every GET
// /mcp/{fqdn} and every capability call resolves a name; without the cache
// each one parses and runs a SQL query, half of a registry request's CPU.
// A change made through this replica clears the cache at once; one made
// through another replica is seen here within the TTL.
const DefaultCacheTTL = time.Second

// cacheSize bounds the cache; a full cache starts over.
const cacheSize = 10_000

// lookupKey is one store lookup of CapabilityByName: the scope whose view
// is taken and the name.
type lookupKey struct {
	scope      store.Scope
	ns, action string
}

type lookupResult struct {
	entry   Entry
	found   bool
	expires time.Time
}

// lookupCache remembers capability lookups, found or not, for cacheTTL.
type lookupCache struct {
	ttl     time.Duration // <= 0: no caching
	mu      sync.Mutex
	entries map[lookupKey]lookupResult
}

func (c *lookupCache) get(k lookupKey, now time.Time) (Entry, bool, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.entries[k]
	if !ok || now.After(r.expires) {
		return Entry{}, false, false
	}
	return r.entry, r.found, true
}

func (c *lookupCache) put(k lookupKey, e Entry, found bool, now time.Time) {
	if c.ttl <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= cacheSize {
		c.entries = map[lookupKey]lookupResult{}
	}
	c.entries[k] = lookupResult{entry: e, found: found, expires: now.Add(c.ttl)}
}

// clear forgets everything: a capability was added, renamed, described or
// shared here.
func (c *lookupCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries = nil
}
