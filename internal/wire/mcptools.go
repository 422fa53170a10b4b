package wire

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/pmlerr"
)

// Tool input schemas, as the AI client and the package see them.
var (
	executeSchema = json.RawMessage(`{"type":"object","properties":{
 "code":{"type":"string","description":"A TypeScript function body; it reads the global args and returns the result."},
 "intent":{"type":"string","description":"What the code is for."},
 "args":{"type":"object","description":"The code's global args (default {})."},
 "options":{"type":"object","description":"Lower the wall-clock and JS CPU limits (ms).","properties":{"timeout_ms":{"type":"integer","minimum":1},"cpu_budget_ms":{"type":"integer","minimum":1}}},
 "continue_workflow":{"type":"object","properties":{"workflow_id":{"type":"string"},"approved":{"type":"boolean"},"always":{"type":"boolean"}},"required":["workflow_id","approved"],"description":"Answer an approval_required (always: also allow its tools from now on)."}}}`)
	discoverSchema = json.RawMessage(`{"type":"object","properties":{
 "query":{"type":"string","description":"What to do, in words."},
 "queries":{"type":"array","items":{"type":"string"},"description":"Or one per step."},
 "name":{"type":"string","description":"A tool id (ns:action): it in full."},
 "pattern":{"type":"string","description":"ns or ns:*."},
 "limit":{"type":"integer","minimum":1},
 "schemas":{"type":"boolean"}}}`)
	// executeOutputSchema describes the answer object execute returns as
	// structured content. It is permissive (extra fields allowed, nothing
	// beyond status required) so that answers may grow fields without
	// clients that validate structured content refusing them; the fields
	// themselves are in execute's description, which every client reads,
	// so they are not repeated here (the AI client pays for both on every
	// turn).
	executeOutputSchema = json.RawMessage(`{"type":"object","properties":{"status":{"type":"string","enum":["success","execute_locally","approval_required","aborted","error"]},"result":{},"error_code":{"type":"string"},"error":{"type":"string"},"workflow_id":{"type":"string"}},"required":["status"],"additionalProperties":true}`)
	callSchema          = json.RawMessage(`{"type":"object","properties":{
 "tool":{"type":"string","description":"namespace:action"},
 "args":{"type":"object"}},"required":["tool"]}`)
)

const executeDescription = "Run TypeScript that calls tools, a function body: " +
	"`const t = await mcp.filesystem.read_file({path: \"a.md\"}); return t.length;`" +
	". Find tools with discover first. Answers one JSON object: status success (result), approval_required (ask the user, then call again with continue_workflow) or error (error_code, error)."

// ToolDefinitions are the execute and discover tools as both the gateway and
// the package offer them.
func ToolDefinitions() (execute, discover *mcp.Tool) {
	return &mcp.Tool{Name: "execute", Description: executeDescription, InputSchema: executeSchema, OutputSchema: executeOutputSchema},
		&mcp.Tool{Name: "discover", Description: discoverDescription, InputSchema: discoverSchema}
}

// ServerTool is a tool and the handler that serves it: what an MCP server
// registers, and what the gateway's direct tools/call path calls
// (docs/architecture.md "The MCP endpoint").
type ServerTool struct {
	Tool    *mcp.Tool
	Handler mcp.ToolHandler
}

// AddExecuteAndDiscover adds the execute and discover tools to srv: both
// sides decode their arguments and shape their results the same way, and
// differ only in what runs. execute's result is AnswerResult of its answer,
// or, in the package, the input it needs from the person first.
func AddExecuteAndDiscover(srv *mcp.Server,
	execute func(context.Context, *mcp.CallToolRequest, ExecuteRequest) *mcp.CallToolResult,
	discover func(context.Context, *mcp.CallToolRequest, DiscoverRequest) (DiscoverAnswer, error),
) {
	for _, t := range ExecuteAndDiscover(execute, discover) {
		srv.AddTool(t.Tool, t.Handler)
	}
}

// ExecuteAndDiscover are the execute and discover tools of
// AddExecuteAndDiscover, for a server that adds them itself.
func ExecuteAndDiscover(
	execute func(context.Context, *mcp.CallToolRequest, ExecuteRequest) *mcp.CallToolResult,
	discover func(context.Context, *mcp.CallToolRequest, DiscoverRequest) (DiscoverAnswer, error),
) []ServerTool {
	execTool, discoverTool := ToolDefinitions()
	return []ServerTool{
		{Tool: execTool, Handler: func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			er, err := DecodeExecute(req.Params.Arguments)
			if err != nil {
				return AnswerResult(ErrorAnswer(err, "")), nil
			}
			progress, sent := countedProgress(req)
			return withProgressSent(execute(WithProgress(ctx, progress), req, er), sent), nil
		}},
		{Tool: discoverTool, Handler: func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var dr DiscoverRequest
			if err := DecodeArgs(req.Params.Arguments, &dr); err != nil {
				return ErrorResult(err), nil
			}
			out, err := discover(ctx, req, dr)
			if err != nil {
				return ErrorResult(err), nil
			}
			return JSONResult(out), nil
		}},
	}
}

// DecodeArgs decodes a tool's arguments into v; none leaves v as it is. A
// malformed one is INVALID_REQUEST.
func DecodeArgs(raw json.RawMessage, v any) error {
	if len(raw) == 0 {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return argsError("arguments", err)
	}
	return nil
}

const callDescription = "Run one server-routed tool: {tool: \"json:parse\", args: {...}}."

// CallTool is the gateway's call tool, which the package uses for the
// server-routed calls of code it runs.
func CallTool() *mcp.Tool {
	return &mcp.Tool{Name: "call", Description: callDescription, InputSchema: callSchema}
}

const discoverDescription = "Find tools by what they do: ids, descriptions, declarations. " +
	"Manage learned skills in code: mcp.pml.admin({action: show|list|rename|describe|visibility|forget, target?, new_namespace?, new_action?, description?, visibility?})."

// AdminRequest is the input of the admin tool: it shows, lists, names,
// describes, shares and forgets the capabilities of the caller's own project.
type AdminRequest struct {
	Action string `json:"action"` // show | list | rename | describe | visibility | forget
	// Target is the capability's id, its name as code calls it ("cap:read_parse_json",
	// or what it was renamed to) or its FQDN (four-part: the current version).
	// Every action but list needs one.
	Target       string  `json:"target,omitempty"`
	NewNamespace string  `json:"new_namespace,omitempty"`
	NewAction    string  `json:"new_action,omitempty"`
	Description  *string `json:"description,omitempty"`
	Visibility   string  `json:"visibility,omitempty"`
}

// Admin actions.
const (
	AdminShow       = "show"
	AdminList       = "list"
	AdminRename     = "rename"
	AdminDescribe   = "describe"
	AdminVisibility = "visibility"
	AdminForget     = "forget"
)

// Visibilities a capability can have (store.Visibility).
var visibilities = []string{"private", "project", "org", "public"}

// DecodeAdmin parses and checks admin arguments: the same rule for the
// gateway and for the package, which checks them before it asks the person
// anything (docs/protocol.md "Gateway MCP tools").
func DecodeAdmin(raw json.RawMessage) (AdminRequest, error) {
	var r AdminRequest
	if err := DecodeArgs(raw, &r); err != nil {
		return r, err
	}
	return r, r.Validate()
}

// Validate checks an admin request before anything is looked up or asked.
func (r AdminRequest) Validate() error {
	bad := func(format string, args ...any) error {
		return pmlerr.New(pmlerr.InvalidRequest, "admin: "+format, args...)
	}
	switch r.Action {
	case AdminShow, AdminDescribe, AdminForget:
	case AdminList:
		return nil
	case AdminRename:
		if r.NewNamespace == "" && r.NewAction == "" {
			return bad("rename: new_namespace or new_action is required")
		}
	case AdminVisibility:
		if !slices.Contains(visibilities, r.Visibility) {
			return bad("visibility must be private, project, org or public, not %q", r.Visibility)
		}
	default:
		return bad("action must be show, list, rename, describe, visibility or forget, not %q", r.Action)
	}
	if r.Target == "" {
		return bad("%s: target (a capability id, name or FQDN) is required", r.Action)
	}
	return nil
}

// ReadOnly reports whether the request only reads: show, list, and describe
// without a description (which shows the current one). Reading asks nobody.
func (r AdminRequest) ReadOnly() bool {
	return r.Action == AdminShow || r.Action == AdminList || r.Action == AdminDescribe && r.Description == nil
}

// Effect says in a sentence what a changing request does, for the person
// asked to approve it.
func (r AdminRequest) Effect() string {
	switch r.Action {
	case AdminRename:
		return "It renames " + r.Target + " to " + strings.Trim(r.NewNamespace+":"+r.NewAction, ":") +
			"; whoever sees it (other projects or orgs, if it is shared) calls it by the new name"
	case AdminDescribe:
		return "It changes the description of " + r.Target + ", which whoever sees it reads"
	case AdminVisibility:
		return "It makes " + r.Target + " " + r.Visibility + ": " + map[string]string{
			"private": "only this project sees it", "project": "only this project sees it",
			"org": "every project of your org sees and calls it", "public": "every org sees and calls it",
		}[r.Visibility]
	case AdminForget:
		return "It forgets " + r.Target + ", every version; whoever calls it (other projects or orgs, if it is shared) can no longer"
	}
	return ""
}

var adminSchema = json.RawMessage(`{"type":"object","properties":{
 "action":{"type":"string","enum":["show","list","rename","describe","visibility","forget"]},
 "target":{"type":"string","description":"The capability's id, name (ns:action, as code calls it) or FQDN, as execute's capability answer gives them; every action but list."},
 "new_namespace":{"type":"string","description":"rename: the namespace code calls it under (mcp.<namespace>.<action>)."},
 "new_action":{"type":"string","description":"rename: the action name."},
 "description":{"type":"string","description":"describe: what the capability does (without it: the current description)."},
 "visibility":{"type":"string","enum":["private","project","org","public"],"description":"visibility: who may see and call it."}},
 "required":["action"]}`)

// AdminTool is the admin tool as the gateway offers it and the package's
// code calls it (mcp.pml.admin).
func AdminTool() *mcp.Tool {
	return &mcp.Tool{Name: "admin", InputSchema: adminSchema,
		Description: "Manage learned capabilities (every successful execute is saved as one): " +
			"{action:\"show\", target}; {action:\"list\"} lists this project's; " +
			"rename {action:\"rename\", target, new_namespace, new_action} so code calls it as mcp.<new_namespace>.<new_action>(args) " +
			"(a tool's namespace is NAMESPACE_RESERVED); " +
			"{action:\"describe\", target, description}; {action:\"visibility\", target, visibility: private|project|org|public}; " +
			"{action:\"forget\", target} deletes it. A renamed skill keeps answering to its old name."}
}

// AnswerResult wraps an execute answer as the tool result of docs/protocol.md
// "Execute answers": one JSON object in content[0].text, the same object as
// structuredContent (for clients that read typed results), isError when the
// status is error.
func AnswerResult(a Answer) *mcp.CallToolResult {
	// Its own encoding, as Marshal would write it, without the encoder
	// checking and compacting those bytes once more.
	body, err := a.MarshalJSON()
	if err != nil {
		body, _ = Marshal(ErrorAnswer(pmlerr.Wrap(pmlerr.Internal, err), a.WorkflowID))
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(body)}},
		StructuredContent: json.RawMessage(body), IsError: a.Status == StatusError}
}

// ErrorResult is the tool result for a failed discover, call or admin.
func ErrorResult(err error) *mcp.CallToolResult { return AnswerResult(ErrorAnswer(err, "")) }

// JSONResult is a tool result holding v as JSON text.
func JSONResult(v any) *mcp.CallToolResult {
	body, err := Marshal(v)
	if err != nil {
		return ErrorResult(pmlerr.Wrap(pmlerr.Internal, err))
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(body)}}}
}
