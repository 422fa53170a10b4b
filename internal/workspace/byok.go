package workspace

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/pml-go/pml/internal/approval"
	"github.com/pml-go/pml/internal/registry"
	regclient "github.com/pml-go/pml/internal/registry/client"
)

// catalogTTL bounds how long a catalog lookup is reused within a session.
const catalogTTL = time.Minute

type catalogLookup struct {
	entry regclient.Entry
	found bool
	at    time.Time
}

// serverFQDN is the registry name of a configured MCP server (a four-part
// name: the gateway redirects it to the current version).
func serverFQDN(name string) string { return "pml.mcp." + name + ".server" }

// catalogEntry looks a server up in the gateway's registry, remembering the
// answer briefly: plans and BYOK calls ask about the same few servers. The
// entry comes through the registry client, so its content has been checked
// against its integrity; it still has to be checked against the lockfile
// (trusted) before the package acts on it. An unreachable gateway is "not
// found" (not cached: it may be back next time); a tampered entry or a
// refused key is an error.
func (p *Workspace) catalogEntry(ctx context.Context, name string) (regclient.Entry, bool, error) {
	if strings.Contains(name, ".") {
		// "org.project.ns" names another project's capabilities, never a
		// server (registry.IsQualified), and is no server FQDN part.
		return regclient.Entry{}, false, nil
	}
	p.mu.Lock()
	c, ok := p.catalog[name]
	p.mu.Unlock()
	if ok && time.Since(c.at) < catalogTTL {
		return c.entry, c.found, nil
	}
	entry, err := p.gw.Registry().Fetch(ctx, serverFQDN(name))
	found := err == nil
	switch {
	case errors.Is(err, registry.ErrNotFound):
	case isNetworkError(err):
		p.log.Debug("catalog lookup", "server", name, "err", err)
		return regclient.Entry{}, false, nil
	case err != nil:
		return regclient.Entry{}, false, err
	case entry.Metadata == nil:
		found = false // a code entry under a server's name is no server
	}
	p.mu.Lock()
	p.catalog[name] = catalogLookup{entry: entry, found: found, at: time.Now()}
	p.mu.Unlock()
	return entry, found, nil
}

// byokServer returns the http entry of a server-routed server, checked
// against the lockfile; item is set when it changed since it was approved.
func (p *Workspace) byokServer(ctx context.Context, server string) (e regclient.Entry, ok bool, item *approval.Item, err error) {
	e, found, err := p.catalogEntry(ctx, server)
	if err != nil || !found || e.Type != registry.TypeHTTP {
		return e, false, nil, err
	}
	item, err = p.trusted(e)
	return e, err == nil, item, err
}

// byokEnv is what a call to a BYOK server carries: its keys from the
// environment and the workspace .env. Sent with that one call only; never
// stored, logged or traced, and only for an entry the lockfile knows: a
// changed one asks for an integrity approval before any key goes.
func (p *Workspace) byokEnv(ctx context.Context, server string) (map[string]string, error) {
	e, ok, item, err := p.byokServer(ctx, server)
	switch {
	case err != nil:
		return nil, err
	case item != nil:
		return nil, needApproval{item: *item}
	case !ok || len(e.Metadata.EnvRequired) == 0:
		return nil, nil
	}
	env := make(map[string]string, len(e.Metadata.EnvRequired))
	for _, k := range e.Metadata.EnvRequired {
		if v, ok := p.env.Lookup(k); ok {
			env[k] = v
		}
	}
	return env, nil
}
