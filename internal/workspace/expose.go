package workspace

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/wire"
)

// Expose adds capabilities ("ns:action") to those .pml.json's "expose"
// lists (pml stdio --expose). Call it before NewMCPServer.
func (p *Workspace) Expose(ids ...string) error {
	for _, id := range ids {
		if !exposeID.MatchString(id) {
			return pmlerr.New(pmlerr.InvalidConfig, "--expose: %q is not a capability name (ns:action)", id)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.expose = append(p.expose, ids...)
	return nil
}

// exposedToolName is the MCP tool name of capability id: MCP tool names
// may not hold ':', and "ns.action" reads as the code's mcp.ns.action.
func exposedToolName(id string) string { return strings.Replace(id, ":", ".", 1) }

// exposedTools keeps one MCP server's exposed capabilities in step with
// the configuration: re-read before each tools/list, tools added or
// removed (the SDK then sends notifications/tools/list_changed).
type exposedTools struct {
	p   *Workspace
	srv *mcp.Server

	mu    sync.Mutex
	added map[string]bool // capability ids currently tools
}

func (p *Workspace) exposedIDs() []string {
	cfg, _, _ := p.refreshConfig()
	p.mu.Lock()
	ids := slices.Concat(cfg.Expose, p.expose)
	p.mu.Unlock()
	slices.Sort(ids)
	return slices.Compact(ids)
}

// middleware syncs the exposed tools before the SDK answers tools/list.
func (e *exposedTools) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "tools/list" {
			e.sync(ctx)
		}
		return next(ctx, method, req)
	}
}

// sync adds the listed capabilities that are not tools yet, described by
// the gateway, and removes those no longer listed. A name the gateway does
// not know is skipped with a warning: it may be learned later.
func (e *exposedTools) sync(ctx context.Context) {
	ids := e.p.exposedIDs()
	e.mu.Lock()
	defer e.mu.Unlock()
	var gone []string
	for id := range e.added {
		if !slices.Contains(ids, id) {
			gone = append(gone, exposedToolName(id))
			delete(e.added, id)
		}
	}
	if len(gone) > 0 {
		e.srv.RemoveTools(gone...)
	}
	for _, id := range ids {
		if e.added[id] {
			continue
		}
		tool, err := e.p.describeExposed(ctx, id)
		if err != nil {
			e.p.log.Warn("expose: capability skipped", "name", id, "err", err)
			continue
		}
		e.srv.AddTool(tool, e.handler(id))
		e.added[id] = true
	}
}

// describeExposed finds capability id by exact name and makes its tool.
func (p *Workspace) describeExposed(ctx context.Context, id string) (*mcp.Tool, error) {
	ans, err := p.gw.Discover(ctx, wire.DiscoverRequest{Name: id, Limit: 1, Schemas: true})
	if err != nil {
		return nil, fmt.Errorf("discover %s: %w", id, err)
	}
	i := slices.IndexFunc(ans.Tools, func(t wire.DiscoveredTool) bool { return t.ID == id })
	if i < 0 {
		return nil, fmt.Errorf("no capability or tool named %s", id)
	}
	t := ans.Tools[i]
	schema := t.InputSchema
	if len(schema) == 0 {
		schema = json.RawMessage(`{"type":"object"}`)
	}
	desc := t.Description
	if desc == "" {
		desc = "Runs " + id + "."
	}
	return &mcp.Tool{Name: exposedToolName(id), Description: desc, InputSchema: schema}, nil
}

// handler runs capability id through execute, like code calling it, so
// approvals, traces and limits apply as to any execution.
func (e *exposedTools) handler(id string) mcp.ToolHandler {
	ns, action, _ := strings.Cut(id, ":")
	code := fmt.Sprintf("return await mcp.%s.%s(args);", ns, action)
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args := req.Params.Arguments
		if len(args) == 0 || string(args) == "null" {
			args = json.RawMessage(`{}`)
		}
		return e.p.executeResult(wire.WithProgress(ctx, wire.RequestProgress(req)), req, wire.ExecuteRequest{Code: code, Args: args}), nil
	}
}
