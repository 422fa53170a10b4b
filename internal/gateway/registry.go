package gateway

import (
	"context"
	"slices"

	"github.com/pml-go/pml/internal/registry"
	"github.com/pml-go/pml/internal/routing"
	"github.com/pml-go/pml/internal/tools"
	"github.com/pml-go/pml/internal/tools/local"
	"github.com/pml-go/pml/internal/tools/std"
)

// newRegistry publishes the built-in tools (the gateway's std tools and the
// package's client built-ins), the configured servers and the store's
// capabilities. The config was validated, so an error here is a defect: it is
// logged and the registry serves capabilities only.
func (s *Service) newRegistry(hosted map[string]ServerEntry) *registry.Registry {
	ctx := context.Background()
	builtins, _ := std.New().Tools(ctx)
	clientBuiltins, _ := local.New(".").Tools(ctx)
	var servers []registry.Server
	for name, e := range s.catalog {
		servers = append(servers, registry.Server{Name: name, Transport: e.serverType(), Command: e.Command,
			Args: e.Args, URL: e.URL, Env: e.Env, EnvRequired: envRequired(e.ServerConfig), Description: e.Description})
	}
	for name, e := range hosted {
		servers = append(servers, registry.Server{Name: name, Hosted: true, Transport: e.serverType(),
			URL: e.URL, EnvRequired: envRequired(e.ServerConfig), Description: e.Description})
	}
	// The default rules' namespaces stay tools' names even where this
	// gateway's rules leave some out: packages route them to their machine.
	reserved := slices.Concat(s.tools.Namespaces(), local.Namespaces(), ruleNamespaces(routing.Default()))
	r, err := registry.New(registry.Options{Store: s.store, Builtins: slices.Concat(builtins, clientBuiltins),
		Rules: s.rules, Servers: servers, Reserved: reserved, Live: s.serverLive})
	if err != nil {
		s.log.Error("registry: publishing built-ins and servers", "err", err)
		r, _ = registry.New(registry.Options{Store: s.store, Rules: s.rules, Reserved: reserved})
	}
	return r
}

// ruleNamespaces are the namespaces r's patterns name.
func ruleNamespaces(r routing.Rules) []string {
	var out []string
	for _, p := range slices.Concat(r.Client, r.Server) {
		ns, _ := tools.Split(p)
		out = append(out, ns)
	}
	return out
}
