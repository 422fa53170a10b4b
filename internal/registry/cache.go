package registry

import (
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

// lookupResult is a lookup's answer, found or not: a miss is cached too.
// The cache is cleared whenever a capability is added, renamed, described
// or shared here.
type lookupResult struct {
	entry Entry
	found bool
}
