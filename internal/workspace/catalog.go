package workspace

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/pml-go/pml/internal/tools"
	"github.com/pml-go/pml/internal/wire"
)

// CatalogEntry is one line of the workspace page's catalog (GET
// /api/catalog on `pml serve`, docs/protocol.md "Endpoints").
type CatalogEntry struct {
	ID   string `json:"id"`   // ns:action, or a server's name
	Kind string `json:"kind"` // "tool" | "server" | "capability"
	// Routing is where it runs: "client" (this machine) or "server".
	Routing string `json:"routing"`
	// Source is where it comes from: "built-in", ".pml.json" (a server of
	// the workspace or an installed dependency) or "gateway".
	Source      string `json:"source"`
	FQDN        string `json:"fqdn,omitempty"`
	State       string `json:"state,omitempty"` // a server's: idle, starting, ready, failed, stopped
	Error       string `json:"error,omitempty"` // a failed server's last start error
	Uses        *int64 `json:"uses,omitempty"`  // the times a capability ran (wire.DiscoveredTool.Uses)
	Description string `json:"description,omitempty"`
}

// Catalog is what the workspace can call, as its page lists it.
type Catalog struct {
	Items []CatalogEntry `json:"items"`
	Total int            `json:"total"`
	// GatewayError says why the gateway's tools and capabilities are
	// missing (a remote gateway that cannot be reached); empty otherwise.
	GatewayError string `json:"gateway_error,omitempty"`
}

// maxCatalogGateway bounds the gateway entries the page lists.
const maxCatalogGateway = 1000

// Catalog lists the built-in tools, the workspace's servers with their
// state (and the tools they listed last, in this process or, from the
// server records, in another) and the gateway's tools and learned
// capabilities. Unlike discover it starts no server: opening the page must
// not spawn processes.
func (p *Workspace) Catalog(ctx context.Context) (Catalog, error) {
	cfg, local, _ := p.refreshConfig()
	p.mu.Lock()
	builtins := p.builtins
	p.mu.Unlock()
	var out Catalog
	statuses := p.pool.Statuses()
	for _, ns := range local.Namespaces() {
		prov, _ := local.Provider(ns)
		if prov == builtins {
			list, err := builtins.Tools(ctx)
			if err != nil {
				return Catalog{}, fmt.Errorf("listing the built-in tools: %w", err)
			}
			for _, t := range list {
				if ns0, _ := tools.Split(t.ID); ns0 == ns {
					out.Items = append(out.Items, CatalogEntry{ID: t.ID, Kind: "tool", Routing: "client", Source: "built-in", Description: t.Description})
				}
			}
			continue
		}
		srv, isServer := p.pool.Server(ns)
		if !isServer {
			// A namespace served in this process that is no server of
			// .pml.json or a dependency (pml: the admin tool, forwarded to
			// the gateway): its tools, built in; listing them starts
			// nothing. It was listed as a server "from .pml.json, installed
			// dependency" (issue 41).
			list, err := prov.Tools(ctx)
			if err != nil {
				return Catalog{}, fmt.Errorf("listing the %s tools: %w", ns, err)
			}
			for _, t := range list {
				out.Items = append(out.Items, CatalogEntry{ID: t.ID, Kind: "tool", Routing: "client", Source: "built-in", Description: t.Description})
			}
			continue
		}
		st := statuses[ns]
		desc := "lists its tools on first use"
		known := []tools.Info(nil)
		if list, ok := srv.KnownTools(); ok {
			known = list
			desc = fmt.Sprintf("%d tools", len(list))
		}
		if known == nil {
			// Not listed by this process: what the server's record says of
			// an earlier start or listing, maybe by another process (`pml
			// exec`, `pml stdio`); the catalog never starts it.
			if d, list, ok := p.recordedUse(ns); ok {
				desc, known = d, list
			}
		}
		if _, configured := cfg.MCPServers[ns]; !configured {
			desc = "installed dependency; " + desc
		}
		out.Items = append(out.Items, CatalogEntry{ID: ns, Kind: "server", Routing: "client", Source: ".pml.json", State: string(st.State), Error: st.Error, Description: desc})
		for _, t := range known {
			out.Items = append(out.Items, CatalogEntry{ID: t.ID, Kind: "tool", Routing: "client", Source: ".pml.json", Description: t.Description})
		}
	}
	remote, err := p.gw.Discover(ctx, wire.DiscoverRequest{Limit: maxCatalogGateway})
	switch {
	case err != nil && isNetworkError(err):
		out.GatewayError = err.Error()
	case err != nil:
		return Catalog{}, err
	}
	for _, t := range remote.Tools {
		// A namespace served here is this machine's alone (see Discover).
		ns, _ := tools.Split(t.ID)
		if _, served := local.Provider(ns); served {
			continue
		}
		out.Items = append(out.Items, CatalogEntry{ID: t.ID, Kind: t.Kind, Routing: t.Routing, Source: "gateway",
			FQDN: t.FQDN, Uses: t.Uses, Description: t.Description})
	}
	slices.SortStableFunc(out.Items, func(a, b CatalogEntry) int {
		return strings.Compare(kindOrder(a.Kind), kindOrder(b.Kind))
	})
	out.Total = len(out.Items)
	return out, nil
}

// kindOrder lists servers first (their state matters most), then
// capabilities (what the workspace learned), then tools.
func kindOrder(kind string) string {
	switch kind {
	case "server":
		return "0"
	case "capability":
		return "1"
	}
	return "2"
}
