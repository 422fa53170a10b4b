package workspace

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/wire"
)

// adminTool forwards the AI client's admin calls to the gateway, which owns
// the capabilities.
func (p *Workspace) adminTool() (*mcp.Tool, mcp.ToolHandler) {
	return wire.AdminTool(), func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		out, err := p.gw.Admin(ctx, req.Params.Arguments)
		if err != nil {
			return wire.ErrorResult(err), nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(out)}}}, nil
	}
}
