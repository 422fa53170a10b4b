package registry

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/pml-go/pml/internal/lru"
	"github.com/pml-go/pml/internal/registry/fqdn"
	"github.com/pml-go/pml/internal/routing"
	"github.com/pml-go/pml/internal/sanitize"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/tools"
	"github.com/pml-go/pml/internal/ttlcache"
)

// Options build a Registry.
type Options struct {
	// Store holds the capabilities; nil means there are none.
	Store store.Store
	// Builtins are the built-in tools, routed by Rules.
	Builtins []tools.Info
	Rules    routing.Rules
	Servers  []Server
	// Reserved are namespaces of tools (built-in, hosted, catalog, routed by
	// the rules): a capability never takes one, so a tenant's capability can
	// never stand in for a real tool.
	Reserved []string
	// Live reports hosted servers' tools and start errors; nil leaves their
	// entries as the configuration describes them.
	Live Live
	// CacheTTL is how long capability lookups are reused: 0 means
	// DefaultCacheTTL, a negative value no cache.
	CacheTTL time.Duration
}

// Registry answers lookups and catalog listings for one gateway. Built-ins
// and servers are computed once; capabilities are read from the store on
// each request, so every replica serves the same thing.
type Registry struct {
	store    store.Store
	static   map[string]Entry // by four-part name
	ordered  []Entry          // the same, by FQDN
	byTool   map[string]Entry // built-ins by tool id
	servers  map[string]Metadata
	reserved map[string]bool
	// reservedFold is reserved in lower case, for names given to rename.
	reservedFold map[string]bool
	saves        singleflight.Group
	lookups      *ttlcache.Cache[lookupKey, lookupResult]
	// now is the lookup cache's clock: time.Now, a clock a test moves
	// (a sleep past the TTL raced the checks before it on a loaded machine).
	now  func() time.Time
	live Live
	// flag is the sanitizer's rules (sanitize.Sanitizer.Flag), for
	// what another project may see of a capability (ViewFor).
	flag func(string) string
}

// New builds a registry.
func New(o Options) (*Registry, error) {
	r := &Registry{store: o.Store, static: map[string]Entry{}, byTool: map[string]Entry{}, servers: map[string]Metadata{}, reserved: map[string]bool{}, live: o.Live,
		flag: memoFlag(sanitize.New(nil).Flag), now: time.Now}
	ttl := o.CacheTTL
	if ttl == 0 {
		ttl = DefaultCacheTTL
	}
	r.lookups = ttlcache.New[lookupKey, lookupResult](ttl, cacheSize)
	for _, ns := range o.Reserved {
		r.reserved[ns] = true
	}
	add := func(e Entry) error {
		if _, dup := r.static[e.Name.Base()]; dup {
			return fmt.Errorf("registry: %s published twice", e.Name.Base())
		}
		r.static[e.Name.Base()] = e
		r.ordered = append(r.ordered, e)
		return nil
	}
	for _, info := range o.Builtins {
		e, err := builtinEntry(info, o.Rules.Route(info.ID))
		if err != nil {
			return nil, err
		}
		if err := add(e); err != nil {
			return nil, err
		}
		r.byTool[info.ID] = e
		r.reserved[info.Namespace()] = true
	}
	for _, s := range o.Servers {
		e, m, err := serverEntry(s)
		if err != nil {
			return nil, err
		}
		if err := add(e); err != nil {
			return nil, err
		}
		r.servers[s.Name] = m
		r.reserved[s.Name] = true
	}
	for _, side := range [][]string{o.Rules.Client, o.Rules.Server} {
		for _, pattern := range side {
			// Routing "cap" somewhere is about capabilities, not a tool.
			if ns, _ := tools.Split(pattern); ns != DefaultNamespace {
				r.reserved[ns] = true
			}
		}
	}
	r.reservedFold = make(map[string]bool, len(r.reserved))
	for ns := range r.reserved {
		r.reservedFold[strings.ToLower(ns)] = true
	}
	slices.SortFunc(r.ordered, func(a, b Entry) int { return strings.Compare(a.FQDN(), b.FQDN()) })
	return r, nil
}

// memoFlag remembers flag's verdict per text: another project's view of a
// capability checks every key of its output schema (ViewFor), on every
// discover and lookup, and keys repeat.
func memoFlag(flag func(string) string) func(string) string {
	seen := lru.New[string, string](flagMemoEntries, flagMemoEntries*64)
	return func(text string) string {
		if v, ok := seen.Get(text); ok {
			return v
		}
		return seen.Add(text, flag(text), len(text)+16)
	}
}

// flagMemoEntries bounds the texts memoFlag remembers.
const flagMemoEntries = 8192

// Reserved reports whether ns is a tool namespace no capability may take.
func (r *Registry) Reserved(ns string) bool { return r.reserved[ns] }

// Server returns the entry of a configured MCP server by name.
func (r *Registry) Server(name string) (Entry, bool) {
	m, ok := r.servers[name]
	if !ok {
		return Entry{}, false
	}
	n, _ := fqdn.Parse(m.FQDN)
	return r.static[n.Base()], true
}

// ServerMetadata returns the metadata of a configured MCP server by name,
// as GET /mcp/pml.mcp.<name>.server serves it.
func (r *Registry) ServerMetadata(name string) (Metadata, bool) {
	m, ok := r.servers[name]
	return m, ok
}

// Get returns the entry named n (four- or five-part) as viewer sees it: the
// current version, or a *HashMismatchError when n names another hash, or
// ErrNotFound.
func (r *Registry) Get(ctx context.Context, viewer store.Scope, n fqdn.Name) (Entry, error) {
	e, err := r.current(ctx, viewer, n)
	if err != nil {
		return Entry{}, err
	}
	if n.Hash != "" && n.Hash != e.Name.Hash {
		return Entry{}, &HashMismatchError{Requested: n, Current: e}
	}
	return e, nil
}

func (r *Registry) current(ctx context.Context, viewer store.Scope, n fqdn.Name) (Entry, error) {
	if e, ok := r.static[n.Base()]; ok {
		return r.withLive(e), nil
	}
	if r.store == nil || r.reserved[n.Namespace] {
		return Entry{}, notFound(n)
	}
	// The owner's view finds the owner's current version; whether viewer
	// may see it is decided here, so another tenant's private capability is
	// just as absent as an unknown one.
	owner := store.Scope{Org: n.Org, Project: n.Project}
	e, found, err := r.lookup(ctx, owner, n.Namespace, n.Action)
	switch {
	case err != nil:
		return Entry{}, fmt.Errorf("registry %s: %w", n.Base(), err)
	case !found || e.Capability.Scope != owner || !Visible(viewer, *e.Capability):
		return Entry{}, notFound(n)
	}
	return r.viewed(e, viewer), nil
}

// viewed is e as viewer sees it (ViewFor).
func (r *Registry) viewed(e Entry, viewer store.Scope) Entry {
	if e.Capability == nil || e.Capability.Scope == viewer {
		return e
	}
	c := ViewFor(*e.Capability, viewer, r.flag)
	e.Capability, e.Description = &c, c.Description
	return e
}

// lookup is the store's CapabilityByName in scope's view, as an entry,
// through the cache.
func (r *Registry) lookup(ctx context.Context, scope store.Scope, ns, action string) (Entry, bool, error) {
	k := lookupKey{scope: scope, ns: ns, action: action}
	now := r.now()
	if res, ok := r.lookups.Get(k, now); ok {
		return res.entry, res.found, nil
	}
	c, err := r.store.CapabilityByName(ctx, scope, ns, action)
	if errors.Is(err, store.ErrNotFound) {
		r.lookups.Put(k, lookupResult{}, now)
		return Entry{}, false, nil
	}
	if err != nil {
		return Entry{}, false, err
	}
	e, err := CapabilityEntry(c)
	if err != nil {
		return Entry{}, false, err
	}
	r.lookups.Put(k, lookupResult{entry: e, found: true}, now)
	return e, true, nil
}

func notFound(n fqdn.Name) error {
	return fmt.Errorf("MCP '%s' not in registry: %w", n.Base(), ErrNotFound)
}

// Resolve finds what a tool id names for viewer besides a tool: the current
// version of the capability it would call. A bare "ns:action" is the
// viewer's own project's capability, else one its org shares; never another
// org's, public or not, so no other tenant can put code behind a name the
// viewer calls. Another org's public capability is called by its qualified
// id (IsQualified). ok is false when toolID names no capability (a reserved
// namespace never does).
func (r *Registry) Resolve(ctx context.Context, viewer store.Scope, toolID string) (e Entry, ok bool, err error) {
	ns, action := tools.Split(toolID)
	switch {
	case r.store == nil || action == "":
		return Entry{}, false, nil
	case IsQualified(toolID):
		return r.resolveQualified(ctx, viewer, toolID)
	case r.reserved[ns]:
		return Entry{}, false, nil
	}
	e, ok, err = r.lookup(ctx, viewer, ns, action)
	if err != nil {
		return Entry{}, false, fmt.Errorf("resolving %s: %w", toolID, err)
	}
	if ok && e.Capability.Scope.Org != viewer.Org {
		return Entry{}, false, nil // the store's view includes everyone's public ones
	}
	return r.viewed(e, viewer), ok, nil
}

// Builtin returns the entry of a built-in tool by id.
func (r *Registry) Builtin(toolID string) (Entry, bool) {
	e, ok := r.byTool[toolID]
	return e, ok
}
