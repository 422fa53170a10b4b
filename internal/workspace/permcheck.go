package workspace

import (
	"context"
	"encoding/json"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pml-go/pml/internal/registry"
	"github.com/pml-go/pml/internal/tools"
	"github.com/pml-go/pml/internal/tools/std"
	"github.com/pml-go/pml/internal/wire"
)

// warnPermissions logs a warning for each rule of the permissions that
// matches no tool or server this workspace knows, once for each set of
// rules and servers a process sees. An unknown key of .pml.json is an
// error (jsonkeys), but a rule naming nothing is only a warning: it may
// name a tool of a server not started yet, or one the gateway adds later,
// and a rule that matches nothing changes nothing.
func (p *Workspace) warnPermissions(ctx context.Context, cfg Config, local *tools.Mux) {
	// The local tools are rebuilt with every reload of .pml.json: the same
	// mux is the same configuration, checked already, and the key below
	// (an encoding per execute) is not worth building again.
	p.mu.Lock()
	same := local == p.permsLocal
	p.permsLocal = local
	p.mu.Unlock()
	if same {
		return
	}
	p.lookups.permKeys.Add(1)
	key, _ := json.Marshal([]any{cfg.Permissions, slices.Sorted(maps.Keys(cfg.MCPServers))})
	p.mu.Lock()
	seen := p.permsChecked == string(key)
	p.permsChecked = string(key)
	p.mu.Unlock()
	if seen {
		return
	}
	file := filepath.Join(p.ws, ConfigFile)
	for _, w := range p.permissionWarnings(ctx, cfg, local) {
		attrs := []any{"file", file, "list", "permissions." + w.list, "rule", w.rule}
		if w.nearest != "" {
			attrs = append(attrs, "did_you_mean", w.nearest)
		}
		p.log.Warn("permission rule matches no known tool or server", attrs...)
	}
}

// ruleWarning is a rule of list that matches nothing known, and the known
// tool or namespace nearest to it ("" when none is close).
type ruleWarning struct {
	list, rule, nearest string
}

// permissionWarnings checks every rule of cfg's permissions against what
// this workspace knows without starting anything: the built-in tools of
// both sides (this binary carries the gateway's too), the local servers
// (their tools when this process or an earlier one listed them, their
// records), and for a namespace none of those serves, the gateway's
// discover and registry catalog (a request or two per such rule; a gateway
// that cannot be reached leaves those rules unchecked).
// Capability names (namespace cap, or qualified org.project.ns) are not
// checked: learning adds and renames them. Each warning names the list and
// the rule and, when one is close, the nearest known tool or namespace
// (tools.Nearest, the "did you mean" of unknown tools).
func (p *Workspace) permissionWarnings(ctx context.Context, cfg Config, local *tools.Mux) []ruleWarning {
	k := p.knownTools(ctx, cfg, local)
	var out []ruleWarning
	for _, l := range []struct {
		name  string
		rules []string
	}{{"allow", cfg.Permissions.Allow}, {"ask", cfg.Permissions.Ask}, {"deny", cfg.Permissions.Deny}} {
		for _, rule := range l.rules {
			if p.ruleKnown(ctx, k, rule) {
				continue
			}
			out = append(out, ruleWarning{list: l.name, rule: rule, nearest: k.nearest(rule)})
		}
	}
	return out
}

// knownSet is what permissionWarnings checks rules against: tool ids by
// namespace, and the namespaces whose tools are not all known (servers
// that have not listed theirs).
type knownSet struct {
	tools  map[string][]string // namespace → its tool ids
	opaque map[string]bool     // namespaces known, tools unknown
}

// knownTools gathers the knownSet of the workspace whose configuration is
// cfg and whose local tools are mux, starting no server.
func (p *Workspace) knownTools(ctx context.Context, cfg Config, mux *tools.Mux) knownSet {
	k := knownSet{tools: map[string][]string{}, opaque: map[string]bool{registry.DefaultNamespace: true}}
	p.mu.Lock()
	builtins := p.builtins
	p.mu.Unlock()
	add := func(list []tools.Info) {
		for _, t := range list {
			ns, _ := tools.Split(t.ID)
			k.tools[ns] = append(k.tools[ns], t.ID)
		}
	}
	if list, err := std.New().Tools(ctx); err == nil {
		add(list)
	}
	for _, ns := range mux.Namespaces() {
		prov, _ := mux.Provider(ns)
		if prov == builtins {
			if list, err := builtins.Tools(ctx); err == nil {
				add(slices.DeleteFunc(list, func(t tools.Info) bool { n, _ := tools.Split(t.ID); return n != ns }))
			}
			continue
		}
		// A server: what it listed, here or in an earlier process; never
		// a start.
		delete(k.tools, ns) // a server named like a built-in replaces it
		if srv, ok := p.pool.Server(ns); ok {
			if list, ok := srv.KnownTools(); ok {
				add(list)
				continue
			}
		}
		if _, list, ok := p.recordedUse(ns); ok && list != nil {
			add(list)
			continue
		}
		k.opaque[ns] = true
	}
	for name := range cfg.MCPServers {
		if _, listed := k.tools[name]; !listed {
			k.opaque[name] = true // configured, but not built (a missing ${VAR})
		}
	}
	return k
}

// ruleKnown reports whether rule names something k holds, or something the
// gateway serves or its catalog can install.
func (p *Workspace) ruleKnown(ctx context.Context, k knownSet, rule string) bool {
	if rule == "*" {
		return true
	}
	ns, action, _ := strings.Cut(rule, ":")
	if action == "*" {
		action = ""
	}
	if k.opaque[ns] || strings.Contains(ns, ".") {
		return true
	}
	if ids, ok := k.tools[ns]; ok {
		return action == "" || slices.Contains(ids, ns+":"+action)
	}
	ans, err := p.gw.Discover(ctx, wire.DiscoverRequest{Pattern: rule, Limit: 1})
	if err != nil {
		p.log.Debug("permission check: the gateway did not answer discover", "rule", rule, "err", err)
		return true
	}
	if _, hosted := ans.Servers[ns]; ans.Total > 0 || hosted {
		// A hosted server that is not running lists no tools: its actions
		// cannot be checked.
		return true
	}
	if _, found, err := p.catalogEntry(ctx, ns); err != nil || found {
		return true // a server the catalog can install
	}
	return false
}

// nearest is the known tool id or namespace closest to rule, "" when none
// is close.
func (k knownSet) nearest(rule string) string {
	ns, action, _ := strings.Cut(rule, ":")
	var candidates []string
	if action == "" || action == "*" {
		candidates = slices.Collect(maps.Keys(k.tools))
		for n := range k.opaque {
			candidates = append(candidates, n)
		}
		rule = ns
	} else {
		for _, ids := range k.tools {
			candidates = append(candidates, ids...)
		}
	}
	slices.Sort(candidates)
	if near := tools.Nearest(rule, candidates, 1); len(near) > 0 {
		return near[0]
	}
	return ""
}
