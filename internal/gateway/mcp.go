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

// Version is reported in the MCP handshake.
const Version = "0.1.0"

// ClientHeader marks requests from the PML package (a UX hint, not a security
// boundary: docs/protocol.md "Headers").
const ClientHeader = "X-PML-Client"

// Tool input schemas, as the AI client and the package see them.
var (
	executeSchema = json.RawMessage(`{"type":"object","properties":{
 "code":{"type":"string","description":"TypeScript function body. Call tools as await mcp.<namespace>.<action>(args); read inputs from the global args; return the result. Top-level await works."},
 "intent":{"type":"string","description":"What the code is for, in a sentence."},
 "options":{"type":"object","properties":{"timeout_ms":{"type":"integer","minimum":1,"description":"Wall-clock limit in ms, waiting on tools included (default and most: 300000, or what the gateway is configured with)."},"cpu_budget_ms":{"type":"integer","minimum":1,"description":"Limit on the time spent running JS, in ms (default and most: 30000, or what the gateway is configured with)."}}},
 "continue_workflow":{"type":"object","properties":{"workflow_id":{"type":"string"},"approved":{"type":"boolean"},"always":{"type":"boolean","description":"With approved: true, also add the plan's tools to the allow list of .pml.json (the option always)."}},"required":["workflow_id","approved"],"description":"Answer an approval_required."}}}`)
	discoverSchema = json.RawMessage(`{"type":"object","properties":{
 "query":{"type":"string","description":"What you want to do, in words."},
 "name":{"type":"string","description":"An exact tool id, namespace:action."},
 "pattern":{"type":"string","description":"A tool pattern: ns, ns:* or ns:action."},
 "limit":{"type":"integer","minimum":1}}}`)
	callSchema = json.RawMessage(`{"type":"object","properties":{
 "tool":{"type":"string","description":"namespace:action"},
 "args":{"type":"object"}},"required":["tool"]}`)
)

const executeDescription = `Run TypeScript that calls tools. Write a function body: ` +
	"`const text = await mcp.filesystem.read_file({path: \"README.md\"}); return text.length;`" +
	`. Use discover first to find tools and their TypeScript declarations. The answer is one JSON object with status success (result), approval_required (ask the user, then call again with continue_workflow) or error (error_code, error).`

// ToolDefinitions are the execute and discover tools as both the gateway and
// the package offer them.
func ToolDefinitions() (execute, discover *mcp.Tool) {
	return &mcp.Tool{Name: "execute", Description: executeDescription, InputSchema: executeSchema},
		&mcp.Tool{Name: "discover", Description: discoverDescription, InputSchema: discoverSchema}
}

const discoverDescription = "Find tools by what they do; returns ids, descriptions, input schemas and TypeScript declarations (mcp.ns.action(args))."

// NewMCPServer exposes the service's tools over MCP.
func (s *Service) NewMCPServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "pml-gateway", Version: Version}, nil)
	execTool, discoverTool := ToolDefinitions()
	srv.AddTool(execTool,
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			er, err := wire.DecodeExecute(req.Params.Arguments)
			if err != nil {
				return AnswerResult(wire.ErrorAnswer(err, "")), nil
			}
			return AnswerResult(s.Execute(ctx, callerOf(req), er)), nil
		})
	srv.AddTool(discoverTool,
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var dr wire.DiscoverRequest
			if err := unmarshalArgs(req.Params.Arguments, &dr); err != nil {
				return ErrorResult(err), nil
			}
			out, err := s.Discover(ctx, callerOf(req), dr)
			if err != nil {
				return ErrorResult(err), nil
			}
			return JSONResult(out), nil
		})
	srv.AddTool(&mcp.Tool{Name: "call", Description: "Run one server-routed tool: {tool: \"json:parse\", args: {...}}.", InputSchema: callSchema},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var cr wire.CallRequest
			if err := unmarshalArgs(req.Params.Arguments, &cr); err != nil {
				return ErrorResult(err), nil
			}
			out, err := s.Call(ctx, callerOf(req), cr)
			if err != nil {
				return ErrorResult(err), nil
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(out)}}}, nil
		})
	srv.AddTool(AdminTool(), func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var ar AdminRequest
		if err := unmarshalArgs(req.Params.Arguments, &ar); err != nil {
			return ErrorResult(err), nil
		}
		out, err := s.Admin(ctx, callerOf(req), ar)
		if err != nil {
			return ErrorResult(err), nil
		}
		return JSONResult(out), nil
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
	c.IsPackage = strings.EqualFold(req.Extra.Header.Get(ClientHeader), "package")
	c.ClientNamespaces = clientNamespaces(req.Extra.Header)
	return c
}

// AnswerResult wraps an execute answer as the tool result of docs/protocol.md
// "Execute answers": one JSON object in content[0].text, isError when the
// status is error.
func AnswerResult(a wire.Answer) *mcp.CallToolResult {
	body, err := json.Marshal(a)
	if err != nil {
		body, _ = json.Marshal(wire.ErrorAnswer(pmlerr.Wrap(pmlerr.Internal, err), a.WorkflowID))
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(body)}}, IsError: a.Status == wire.StatusError}
}

// ErrorResult is the tool result for a failed discover, call or admin.
func ErrorResult(err error) *mcp.CallToolResult { return AnswerResult(wire.ErrorAnswer(err, "")) }

// JSONResult is a tool result holding v as JSON text.
func JSONResult(v any) *mcp.CallToolResult {
	body, err := json.Marshal(v)
	if err != nil {
		return ErrorResult(pmlerr.Wrap(pmlerr.Internal, err))
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(body)}}}
}
