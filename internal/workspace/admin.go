package workspace

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/wire"
)

// adminTool refuses the AI client's direct admin call: admin has one path,
// code's mcp.pml.admin, under one rule (gateAdmin), so nothing reaches the
// gateway's admin without the check the person relies on (docs/security.md
// "Approvals"). It stays out of tools/list (unlistAdmin); a client that
// calls it anyway learns the way in.
func (p *Workspace) adminTool() (*mcp.Tool, mcp.ToolHandler) {
	return wire.AdminTool(), func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return wire.ErrorResult(pmlerr.New(pmlerr.PermissionDenied,
			"admin is called from code: execute `return await mcp.pml.admin({action: \"show\", target: \"cap:name\"})`; "+
				"reading asks nothing, a change others can see asks the person first")), nil
	}
}
