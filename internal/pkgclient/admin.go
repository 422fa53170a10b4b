package pkgclient

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/pmlerr"
)

// adminTool forwards the AI client's admin calls to the gateway, which owns
// the capabilities.
func (p *Package) adminTool() (*mcp.Tool, mcp.ToolHandler) {
	return gateway.AdminTool(), func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		out, err := p.gw.Admin(ctx, req.Params.Arguments)
		if err != nil {
			return gateway.ErrorResult(err), nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(out)}}}, nil
	}
}

// Admin implements Gateway.
func (g *Remote) Admin(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	text, isErr, err := g.callTool(ctx, "admin", args)
	if err != nil {
		return nil, err
	}
	if isErr {
		return nil, answerError(text)
	}
	return json.RawMessage(text), nil
}

// Admin implements Gateway.
func (g *InProcess) Admin(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	var req gateway.AdminRequest
	if len(args) > 0 {
		if err := json.Unmarshal(args, &req); err != nil {
			return nil, pmlerr.New(pmlerr.InvalidRequest, "invalid admin arguments: %v", err)
		}
	}
	out, err := g.Service.Admin(ctx, g.caller(), req)
	if err != nil {
		return nil, err
	}
	return json.Marshal(out)
}
