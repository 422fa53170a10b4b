package workspace

import (
	"context"
	"slices"

	"github.com/pml-go/pml/internal/approval"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/registry"
	"github.com/pml-go/pml/internal/routing"
	"github.com/pml-go/pml/internal/tools"
	"github.com/pml-go/pml/internal/tools/local"
)

// denied refuses a plan with a denied tool before anything runs.
func denied(perms approval.Permissions, toolIDs []string) error {
	for _, t := range toolIDs {
		if perms.Decide(t) == approval.Deny {
			return pmlerr.New(pmlerr.PermissionDenied, "%s is denied by the permissions in %s", t, ConfigFile).With("tool", t)
		}
	}
	return nil
}

// askItems are the tool permissions the plan still needs in this execution.
// A capability of the project's own org (a bare name, toolsOf answering its
// tools) takes its permission from its tools: it asks only when one of them
// would (docs/security.md "Trust: approvals and secrets"). Another org's
// capability, called by its qualified name, asks unless allowed by name.
func askItems(perms approval.Permissions, g *grants, toolIDs []string, toolsOf func(string) ([]string, bool)) []approval.Item {
	var items []approval.Item
	for _, t := range toolIDs {
		if t == adminToolID {
			continue // asked per call, by what it does (gateAdmin)
		}
		if perms.Decide(t) == approval.Ask && !g.tool(t) && !allowedThrough(perms, t, toolsOf, 0) {
			items = append(items, approval.ToolPermissionItem(t))
		}
	}
	return items
}

// maxCapabilityDepth bounds how deep allowedThrough follows capabilities
// that call capabilities.
const maxCapabilityDepth = 4

// allowedThrough reports whether t is a capability of the project's own org
// whose every tool is allowed (through its own tools, for a capability it
// calls).
func allowedThrough(perms approval.Permissions, t string, toolsOf func(string) ([]string, bool), depth int) bool {
	if toolsOf == nil || registry.IsQualified(t) || depth >= maxCapabilityDepth {
		return false
	}
	used, ok := toolsOf(t)
	if !ok || len(used) == 0 {
		return false
	}
	for _, u := range used {
		switch perms.Decide(u) {
		case approval.Allow:
		case approval.Ask:
			if !allowedThrough(perms, u, toolsOf, depth+1) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// planItems checks every tool of a local plan before anything runs: tool
// permissions, client tools whose server is not installed (a dependency
// approval, whatever the permissions), installed servers whose verified
// entry changed (re-recorded, and then installed is true), and missing API
// keys.
func (p *Workspace) planItems(ctx context.Context, pl *plan) (items []approval.Item, installed bool, err error) {
	if err := p.unknownBuiltin(ctx, pl); err != nil {
		return nil, false, err
	}
	if err := p.unknownTool(ctx, pl); err != nil {
		return nil, false, err
	}
	cfg, rules, mux := pl.cfg, pl.rules, pl.local
	items = askItems(cfg.Permissions, pl.grants, pl.an.Tools, p.capabilityTools(ctx, pl))
	seen := map[string]bool{}
	for _, t := range pl.an.Tools {
		ns, _ := tools.Split(t)
		if seen[ns] {
			continue
		}
		seen[ns] = true
		if rules.Route(t) == routing.Server {
			e, ok, item, err := p.byokServer(ctx, ns)
			switch {
			case err != nil:
				return nil, installed, err
			case item != nil:
				items = append(items, *item)
			case ok:
				if missing := p.env.Missing(e.Metadata.EnvRequired); len(missing) > 0 {
					items = append(items, approval.APIKeyItem(ns, missing))
				}
			}
			continue
		}
		if missing := p.missingKeys(ns); len(missing) > 0 {
			items = append(items, approval.APIKeyItem(ns, missing))
		}
		_, isDep := p.deps.Installed(ns)
		if _, ok := mux.Provider(ns); ok && !isDep {
			continue // configured in .pml.json, or a built-in
		}
		// Installed or not, the catalog entry is revalidated against the
		// lockfile on every plan, so a changed entry is caught.
		entry, found, err := p.catalogEntry(ctx, ns)
		if err != nil {
			return nil, installed, err
		}
		if !found || entry.Type != registry.TypeStdio {
			continue // the call will be UNKNOWN_TOOL, naming the nearest tools
		}
		dep, err := dependencyOf(ns, entry)
		if err != nil {
			return nil, installed, err
		}
		if item, err := p.trusted(entry); err != nil {
			return nil, installed, err
		} else if item != nil {
			items = append(items, *item)
			continue
		}
		if isDep {
			// Re-recorded only when the verified entry changed.
			if err := p.install(ctx, dep); err != nil {
				return nil, installed, err
			}
			installed = true
			continue
		}
		// Allowing a tool's calls is no consent to install software: a
		// server not yet installed is always asked for, with its keys, so
		// it never starts without them.
		items = append(items, approval.DependencyItem(t, dep))
		if missing := p.env.Missing(dep.EnvRequired); len(missing) > 0 {
			items = append(items, approval.APIKeyItem(ns, missing))
		}
	}
	return items, installed, nil
}

// missingKeys are the ${VAR}s of a configured server, or the envRequired of
// an installed one, that are set nowhere.
func (p *Workspace) missingKeys(server string) []string {
	p.mu.Lock()
	missing := slices.Clone(p.missing[server])
	p.mu.Unlock()
	if rec, ok := p.deps.Installed(server); ok {
		missing = append(missing, p.env.Missing(rec.EnvRequired)...)
	}
	// An installed server's keys are also its ${VAR}s: name each once.
	slices.Sort(missing)
	return slices.Compact(missing)
}

// unknownBuiltin refuses, before any approval is asked, a static call to a
// built-in namespace (filesystem, shell) that names no tool of it: approving
// a call that can only fail would be asked for nothing. A namespace a
// configured or installed server takes over is left to that server.
func (p *Workspace) unknownBuiltin(ctx context.Context, pl *plan) error {
	for _, t := range pl.an.Tools {
		ns, _ := tools.Split(t)
		if !slices.Contains(local.Namespaces(), ns) {
			continue
		}
		if _, configured := pl.cfg.MCPServers[ns]; configured {
			continue
		}
		if _, isDep := p.deps.Installed(ns); isDep {
			continue
		}
		prov, ok := pl.local.Provider(ns)
		if !ok {
			continue
		}
		list, err := prov.Tools(ctx)
		if err != nil {
			return pmlerr.Wrap(pmlerr.ToolError, err)
		}
		if !slices.ContainsFunc(list, func(info tools.Info) bool { return info.ID == t }) {
			return tools.UnknownToolError(t, list)
		}
	}
	return nil
}
