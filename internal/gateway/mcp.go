package gateway

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/wire"
)

// NewMCPServer exposes the service's tools over MCP.
func (s *Service) NewMCPServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "pml-gateway", Version: wire.Version}, nil)
	execTool, discoverTool := wire.ToolDefinitions()
	srv.AddTool(execTool,
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			er, err := wire.DecodeExecute(req.Params.Arguments)
			if err != nil {
				return wire.AnswerResult(wire.ErrorAnswer(err, "")), nil
			}
			return wire.AnswerResult(s.Execute(ctx, callerOf(req), er)), nil
		})
	srv.AddTool(discoverTool,
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var dr wire.DiscoverRequest
			if err := unmarshalArgs(req.Params.Arguments, &dr); err != nil {
				return wire.ErrorResult(err), nil
			}
			out, err := s.Discover(ctx, callerOf(req), dr)
			if err != nil {
				return wire.ErrorResult(err), nil
			}
			return wire.JSONResult(out), nil
		})
	srv.AddTool(wire.CallTool(),
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var cr wire.CallRequest
			if err := unmarshalArgs(req.Params.Arguments, &cr); err != nil {
				return wire.ErrorResult(err), nil
			}
			out, err := s.Call(ctx, callerOf(req), cr)
			if err != nil {
				return wire.ErrorResult(err), nil
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(out)}}}, nil
		})
	srv.AddTool(wire.AdminTool(), func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var ar wire.AdminRequest
		if err := unmarshalArgs(req.Params.Arguments, &ar); err != nil {
			return wire.ErrorResult(err), nil
		}
		out, err := s.Admin(ctx, callerOf(req), ar)
		if err != nil {
			return wire.ErrorResult(err), nil
		}
		return wire.JSONResult(out), nil
	})
	return srv
}

func unmarshalArgs(raw json.RawMessage, v any) error {
	if len(raw) == 0 {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return pmlerr.New(pmlerr.InvalidRequest, "invalid arguments: %v", err)
	}
	return nil
}

// callerOf reads the tenant the auth middleware attached and the package hint.
func callerOf(req *mcp.CallToolRequest) Caller {
	var c Caller
	if req.Extra == nil {
		return c
	}
	if ti := req.Extra.TokenInfo; ti != nil {
		if sc, ok := ti.Extra[scopeKey].(store.Scope); ok {
			c.Scope = sc
		}
	}
	c.IsPackage = strings.EqualFold(req.Extra.Header.Get(wire.ClientHeader), "package")
	c.ClientNamespaces = clientNamespaces(req.Extra.Header)
	return c
}
