package gateway

import (
	"context"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/buildinfo"
	"github.com/pml-go/pml/internal/textcut"
	"github.com/pml-go/pml/internal/tracing"
	"github.com/pml-go/pml/internal/wire"
)

// NewMCPServer exposes the service's tools over MCP.
func (s *Service) NewMCPServer() *mcp.Server { return newMCPServer(s.mcpTools()) }

// newMCPServer is an MCP server of tools.
func newMCPServer(tools []wire.ServerTool) *mcp.Server {
	srv := mcp.NewServer(mcpImplementation(), nil)
	srv.AddReceivingMiddleware(mcpReceiving()...)
	for _, t := range tools {
		srv.AddTool(t.Tool, t.Handler)
	}
	return srv
}

// mcpImplementation names the gateway to MCP clients.
func mcpImplementation() *mcp.Implementation {
	return &mcp.Implementation{Name: "pml-gateway", Version: buildinfo.Read().Version}
}

// mcpReceiving is the receiving middleware every MCP request of the gateway
// goes through, on the SDK's server and on the direct tools/call path alike
// (directCalls).
func mcpReceiving() []mcp.Middleware { return []mcp.Middleware{wire.CompactMeta} }

// mcpTools are the gateway's MCP tools and their handlers: the SDK's server
// and the direct tools/call path serve the same ones.
func (s *Service) mcpTools() []wire.ServerTool {
	tools := wire.ExecuteAndDiscover(
		func(ctx context.Context, req *mcp.CallToolRequest, er wire.ExecuteRequest) *mcp.CallToolResult {
			ctx, release := s.requestScoped(ctx, req)
			defer release()
			return s.executeResult(withRequestedTraceID(ctx, req), req, er)
		},
		func(ctx context.Context, req *mcp.CallToolRequest, dr wire.DiscoverRequest) (wire.DiscoverAnswer, error) {
			ctx, release := s.requestScoped(ctx, req)
			defer release()
			return s.Discover(ctx, callerOf(req), dr)
		})
	call := func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ctx, release := s.requestScoped(ctx, req)
		defer release()
		var cr wire.CallRequest
		if err := wire.DecodeArgs(req.Params.Arguments, &cr); err != nil {
			return wire.ErrorResult(err), nil
		}
		out, err := s.Call(ctx, callerOf(req), cr)
		if err != nil {
			return wire.ErrorResult(err), nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(out)}}}, nil
	}
	admin := func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ctx, release := s.requestScoped(ctx, req)
		defer release()
		ar, err := wire.DecodeAdmin(req.Params.Arguments)
		if err != nil {
			return wire.ErrorResult(err), nil
		}
		out, err := s.Admin(ctx, callerOf(req), ar)
		if err != nil {
			return wire.ErrorResult(err), nil
		}
		return wire.JSONResult(out), nil
	}
	return append(tools, wire.ServerTool{Tool: wire.CallTool(), Handler: call}, wire.ServerTool{Tool: wire.AdminTool(), Handler: admin})
}

// callerOf reads the tenant the auth middleware attached and the package hint.
func callerOf(req *mcp.CallToolRequest) Caller {
	if req.Extra == nil {
		return Caller{}
	}
	var p principal
	if ti := req.Extra.TokenInfo; ti != nil {
		p, _ = ti.Extra[principalKey].(principal)
	}
	return callerFrom(p, req.Extra.Header)
}

// callerFrom is the caller of a request from p with headers h, whichever
// way its execute came (MCP or POST /api/v1/execute).
func callerFrom(p principal, h http.Header) Caller {
	c := Caller{Scope: p.Scope, Role: p.Role, Who: p.Caller}
	c.IsPackage = strings.EqualFold(h.Get(wire.ClientHeader), "package")
	c.ClientNamespaces = clientNamespaces(h)
	return c
}

type requestedTraceIDKey struct{}

// withRequestedTraceID carries the trace id an execute call asks its run to
// be recorded under (wire.TraceIDMeta), when it has the form of one; a
// malformed one is ignored and the run gets a fresh id.
func withRequestedTraceID(ctx context.Context, req *mcp.CallToolRequest) context.Context {
	if req.Params == nil {
		return ctx
	}
	id, _ := req.Params.GetMeta()[wire.TraceIDMeta].(string)
	return withTraceID(ctx, id)
}

// withTraceID is withRequestedTraceID for the id itself, as
// POST /api/v1/execute's body carries it.
func withTraceID(ctx context.Context, id string) context.Context {
	if !tracing.ValidTraceID(id) {
		return ctx
	}
	return context.WithValue(ctx, requestedTraceIDKey{}, id)
}

// requestedTraceID is the trace id withRequestedTraceID kept, or "".
func requestedTraceID(ctx context.Context) string {
	id, _ := ctx.Value(requestedTraceIDKey{}).(string)
	return id
}

// executeResult answers an execute that came over MCP. An approval the
// gateway asks a package-less client for (approveForeign) goes to the
// person through the client's elicitation when it declares it: the result
// asks for the approval form and the client calls again with the answer
// (the SDK sends elicitation/create to clients that predate input
// requests); otherwise the answer is approval_required, continued with
// continue_workflow.
func (s *Service) executeResult(ctx context.Context, req *mcp.CallToolRequest, er wire.ExecuteRequest) *mcp.CallToolResult {
	if req.Params.RequestState != "" {
		er = wire.FormContinue(er.Code, req.Params.RequestState, req.Params.InputResponses[wire.ApprovalInput])
	}
	ans := s.Execute(ctx, callerOf(req), er)
	if ans.Status != wire.StatusApprovalRequired || !wire.CanElicit(req.Session) {
		return wire.AnswerResult(ans)
	}
	msg := "PML needs your approval to run this code.\n\n" + ans.Description + "\n\nThe code:\n" + textcut.Prefix(er.Code, maxFormCode)
	return &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{wire.ApprovalInput: wire.ApprovalForm(msg, "Always approve this version for this project")},
		RequestState:  ans.WorkflowID,
	}
}

// maxFormCode bounds the code shown in an approval form.
const maxFormCode = 4000
