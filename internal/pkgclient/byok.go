package pkgclient

import (
	"context"
	"time"

	"github.com/pml-go/pml/internal/gateway"
)

// catalogTTL bounds how long a catalog lookup is reused within a session.
const catalogTTL = time.Minute

type catalogLookup struct {
	entry gateway.CatalogEntry
	found bool
	at    time.Time
}

// catalogEntry looks a server up in the gateway's catalog, remembering the
// answer briefly: plans and BYOK calls ask about the same few servers.
func (p *Package) catalogEntry(ctx context.Context, name string) (gateway.CatalogEntry, bool) {
	p.mu.Lock()
	c, ok := p.catalog[name]
	p.mu.Unlock()
	if ok && time.Since(c.at) < catalogTTL {
		return c.entry, c.found
	}
	entry, found, err := p.gw.CatalogServer(ctx, name)
	if err != nil {
		p.log.Debug("catalog lookup", "server", name, "err", err)
		return entry, false // not cached: the gateway may be back next time
	}
	p.mu.Lock()
	p.catalog[name] = catalogLookup{entry: entry, found: found, at: time.Now()}
	p.mu.Unlock()
	return entry, found
}

// byokKeys are the keys a server-routed BYOK server needs from this machine.
func (p *Package) byokKeys(ctx context.Context, server string) []string {
	e, ok := p.catalogEntry(ctx, server)
	if !ok || e.Type != "http" {
		return nil
	}
	return e.EnvRequired
}

// byokEnv is what a call to a BYOK server carries: its keys from the
// environment and the workspace .env. Sent with that one call only; never
// stored, logged or traced.
func (p *Package) byokEnv(ctx context.Context, server string) map[string]string {
	keys := p.byokKeys(ctx, server)
	if len(keys) == 0 {
		return nil
	}
	env := make(map[string]string, len(keys))
	for _, k := range keys {
		if v, ok := p.env.Lookup(k); ok {
			env[k] = v
		}
	}
	return env
}
