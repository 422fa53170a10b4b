package workspace

import (
	"context"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/buildinfo"
	"github.com/pml-go/pml/internal/tools"
	"github.com/pml-go/pml/internal/wire"
)

// NewMCPServer is the MCP server the AI client talks to: execute, discover,
// the exposed capabilities, and admin, callable though not listed.
func (p *Workspace) NewMCPServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "pml", Version: buildinfo.Read().Version}, nil)
	wire.AddExecuteAndDiscover(srv,
		p.executeResult,
		func(ctx context.Context, _ *mcp.CallToolRequest, dr wire.DiscoverRequest) (wire.DiscoverAnswer, error) {
			return p.Discover(ctx, dr)
		})
	srv.AddTool(p.adminTool())
	exposed := &exposedTools{p: p, srv: srv, added: map[string]bool{}}
	srv.AddReceivingMiddleware(exposed.middleware, unlistAdmin, reserveCallStack)
	return srv
}

// reserveCallStack gives a tool call's goroutine, which the SDK starts for
// each request, its stack before the call decodes its arguments
// (reserveStack).
func reserveCallStack(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "tools/call" {
			reserveStack()
		}
		return next(ctx, method, req)
	}
}

// unlistAdmin leaves admin out of tools/list while it stays callable: the
// AI client would pay for its schema on every turn for a tool it rarely
// uses, and discover's description says how to call it (docs/protocol.md
// "Gateway MCP tools").
func unlistAdmin(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if list, ok := res.(*mcp.ListToolsResult); ok && err == nil && method == "tools/list" {
			list.Tools = slices.DeleteFunc(slices.Clone(list.Tools), func(t *mcp.Tool) bool { return t.Name == wire.AdminTool().Name })
		}
		return res, err
	}
}

// Discover merges the gateway's tools with this machine's, so the AI client
// sees every tool it can call. Without a gateway, local tools only.
func (p *Workspace) Discover(ctx context.Context, req wire.DiscoverRequest) (wire.DiscoverAnswer, error) {
	_, local, _ := p.refreshConfig()
	localTools, starting, err := p.localToolsForDiscover(ctx, local)
	if err != nil {
		return wire.DiscoverAnswer{}, err
	}
	remote, err := p.gw.Discover(ctx, wire.DiscoverRequest{Query: req.Query, Queries: req.Queries, Name: req.Name, Pattern: req.Pattern,
		Limit: 1000, Schemas: true, Graph: true})
	if err != nil && !isNetworkError(err) {
		return wire.DiscoverAnswer{}, err
	}
	if err == nil && len(starting) == 0 {
		// Every local server listed its tools live: the gateway may now
		// learn them too (a report replaces the last one, so never a
		// partial or an old list).
		if err := p.reportTools(ctx, localTools); err != nil {
			p.log.Debug("reporting local tools to the gateway", "err", err)
		}
	}
	seen := map[string]int{}
	var all []tools.Info
	kinds := map[string]wire.DiscoveredTool{}
	for _, t := range localTools {
		seen[t.ID] = len(all)
		all = append(all, t)
		kinds[t.ID] = wire.DiscoveredTool{Kind: "tool", Routing: "client"}
	}
	for _, t := range remote.Tools {
		// A namespace served here is this machine's alone: whatever the
		// gateway lists under it would never be called. Only a result type
		// the gateway inferred from this tenant's calls of it (the tools
		// this package reported) is taken, for a tool that declares none.
		ns, _ := tools.Split(t.ID)
		if i, ok := seen[t.ID]; ok {
			if t.OutputInferred && len(all[i].OutputSchema) == 0 {
				all[i].OutputSchema, all[i].OutputInferred = t.OutputSchema, true
			}
			continue
		}
		if _, served := local.Provider(ns); served {
			continue
		}
		seen[t.ID] = len(all)
		all = append(all, tools.Info{ID: t.ID, Description: t.Description, InputSchema: t.InputSchema, OutputSchema: t.OutputSchema,
			OutputInferred: t.OutputInferred, Server: remote.Context[ns], Learned: t.Learned})
		kinds[t.ID] = t
	}
	out := wire.RankTools(all, req, func(id string) wire.DiscoveredTool { return kinds[id] }, remote.Graph, remote.Boost)
	out.Servers = remote.Servers // the gateway's hosted servers and their state
	// and this machine's servers still starting: their tools in the answer
	// are the ones they listed last, or none yet.
	for ns, st := range starting {
		if out.Servers == nil {
			out.Servers = map[string]wire.ServerStatus{}
		}
		out.Servers[ns] = st
	}
	out.Related = remote.Related
	return out, nil
}
