// Package wire holds the JSON shapes of docs/protocol.md that the gateway, the
// package and AI clients exchange: the execute request, its answers, and the
// arguments of the other MCP tools. Both sides encode and decode through these
// types so the contract lives in one place.
package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/rawjson"
	"github.com/pml-go/pml/internal/registry/fqdn"
)

// ExecuteRequest is the input of the execute tool.
type ExecuteRequest struct {
	Code   string `json:"code"`
	Intent string `json:"intent,omitempty"`
	// Args is the code's global args, a JSON object; absent, the code sees {}.
	Args             json.RawMessage   `json:"args,omitempty"`
	Options          *ExecuteOptions   `json:"options,omitempty"`
	ContinueWorkflow *ContinueWorkflow `json:"continue_workflow,omitempty"`
}

// ExecuteCall is the body of the gateway's POST /api/v1/execute, the
// package's execute without MCP's framing (docs/protocol.md "Plain
// execute"): the request and the trace id the MCP call sends in its _meta
// (TraceIDMeta).
type ExecuteCall struct {
	ExecuteRequest
	TraceID string `json:"trace_id,omitempty"`
}

// ExecutePath is where the gateway serves ExecuteCall.
const ExecutePath = "/api/v1/execute"

// ExecuteOptions tune one execution.
type ExecuteOptions struct {
	TimeoutMS   int `json:"timeout_ms,omitempty"`    // wall clock, waiting on tools included
	CPUBudgetMS int `json:"cpu_budget_ms,omitempty"` // CPU time spent running JS
	// Learn false asks the gateway not to save the run as a capability (the
	// package sets it for code holding a value of the workspace .env).
	Learn *bool `json:"learn,omitempty"`
	// Pins are the versions of other orgs' capabilities the package checked
	// against its lockfile for this run: qualified tool id → five-part FQDN.
	// The gateway runs a pinned capability only at that version, else the
	// call is INTEGRITY_ERROR (docs/security.md "Tenants and names").
	Pins map[string]string `json:"pins,omitempty"`
}

// Learns reports whether a successful run with o may be saved as a
// capability: unless o says learn false.
func (o *ExecuteOptions) Learns() bool { return o == nil || o.Learn == nil || *o.Learn }

// ContinueWorkflow answers an approval_required.
type ContinueWorkflow struct {
	WorkflowID string `json:"workflow_id"`
	Approved   *bool  `json:"approved"`
	// Always (the option "always", only with Approved) also adds the
	// approved tools to the allow list of .pml.json.
	Always bool `json:"always,omitempty"`
}

// DecodeExecute parses and validates execute arguments; a malformed request
// is an INVALID_REQUEST error that says what is wrong.
func DecodeExecute(raw json.RawMessage) (ExecuteRequest, error) {
	if req, ok := plainExecute(raw); ok {
		return req, req.Check()
	}
	var req ExecuteRequest
	if len(raw) == 0 {
		raw = []byte("{}")
	}
	if err := json.Unmarshal(raw, &req); err != nil {
		return req, argsError("execute arguments", err)
	}
	return req, req.Check()
}

// plainExecute reads the usual request, code with an intent and args, with
// one pass over raw after its validation (rawjson) instead of a decode by
// reflection. Anything else (options, continue_workflow, a key not written
// as the field's tag, which encoding/json would still match, a member of the
// wrong type) is false, for json.Unmarshal to decode or refuse.
func plainExecute(raw json.RawMessage) (ExecuteRequest, bool) {
	var req ExecuteRequest
	if !rawjson.Valid(raw) {
		return req, false
	}
	ok := true
	read := rawjson.Members(raw, func(key, value []byte) bool {
		switch string(key) {
		case "code":
			req.Code, ok = rawjson.String(value)
		case "intent":
			req.Intent, ok = rawjson.String(value)
		case "args":
			req.Args = json.RawMessage(value)
		default:
			ok = false
		}
		return ok
	})
	return req, read && ok
}

// Check validates a decoded execute request; a malformed one is an
// INVALID_REQUEST error that says what is wrong.
func (req ExecuteRequest) Check() error {
	if !isObjectOrNull(req.Args) {
		return pmlerr.New(pmlerr.InvalidRequest, "args must be a JSON object")
	}
	if req.Options != nil && req.Options.TimeoutMS < 0 {
		return pmlerr.New(pmlerr.InvalidRequest, "options.timeout_ms must be positive")
	}
	if req.Options != nil && req.Options.CPUBudgetMS < 0 {
		return pmlerr.New(pmlerr.InvalidRequest, "options.cpu_budget_ms must be positive")
	}
	if cw := req.ContinueWorkflow; cw != nil {
		if cw.WorkflowID == "" {
			return pmlerr.New(pmlerr.InvalidRequest, "continue_workflow.workflow_id is required")
		}
		if cw.Approved == nil {
			return pmlerr.New(pmlerr.InvalidRequest, "continue_workflow.approved (true or false) is required")
		}
		if cw.Always && !*cw.Approved {
			return pmlerr.New(pmlerr.InvalidRequest, "continue_workflow.always needs approved: true")
		}
	}
	return nil
}

// isObjectOrNull reports whether raw, already valid JSON, is an object, null
// or absent.
func isObjectOrNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null" || t[0] == '{'
}

// Status of an execute answer.
type Status string

const (
	StatusSuccess          Status = "success"
	StatusExecuteLocally   Status = "execute_locally"
	StatusApprovalRequired Status = "approval_required"
	StatusAborted          Status = "aborted"
	StatusError            Status = "error"
)

// ToolRef is one entry of execute_locally's tools_used.
type ToolRef struct {
	ID      string `json:"id"`
	FQDN    string `json:"fqdn,omitempty"`
	Routing string `json:"routing"`
}

// CapabilityRef names the capability a successful run was saved as.
type CapabilityRef struct {
	ID   string `json:"id"`
	FQDN string `json:"fqdn"`
	Name string `json:"name"`
}

// DAG is the execute_locally dag field.
type DAG struct {
	Tasks []DAGTask `json:"tasks"`
	// Decisions are the branch points that select tasks; absent when none.
	Decisions []DAGDecision `json:"decisions,omitempty"`
}

// DAGTask is one tool call of the static plan.
type DAGTask struct {
	ID        string   `json:"id"`
	Tool      string   `json:"tool"`
	DependsOn []string `json:"depends_on"` // data dependencies
	Layer     int      `json:"layer"`
	// After is an order without data: earlier tasks naming the same literal
	// resource (path, file, ...). Absent when none.
	After []string `json:"after,omitempty"`
	// Loops are the ids of the loops around the call site, outermost
	// first. Absent when none.
	Loops []string `json:"loops,omitempty"`
}

// DAGDecision is one decision of the plan (if, switch, ternary, and, or,
// nullish) and the tasks and nested decisions under each branch.
type DAGDecision struct {
	ID        string      `json:"id"`
	Kind      string      `json:"kind"`
	Condition string      `json:"condition,omitempty"`
	DependsOn []string    `json:"depends_on"`
	Branches  []DAGBranch `json:"branches"`
}

// DAGBranch is one branch of a decision: task ids and decision ids.
type DAGBranch struct {
	Label string   `json:"label"`
	Nodes []string `json:"nodes"`
}

// Answer is every execute answer; which fields are set depends on Status.
// Details are merged into the top level of the JSON object (error details
// such as line, column, client_tools, suggestions).
type Answer struct {
	Status          Status          `json:"status"`
	Result          json.RawMessage `json:"result,omitempty"`
	ExecutedLocally *bool           `json:"executed_locally,omitempty"`
	WorkflowID      string          `json:"workflow_id,omitempty"`
	TraceID         string          `json:"trace_id,omitempty"`
	DurationMS      *float64        `json:"duration_ms,omitempty"`
	Capability      *CapabilityRef  `json:"capability,omitempty"`
	Logs            []string        `json:"logs,omitempty"`

	// execute_locally
	Code string `json:"code,omitempty"`
	// CodeHash is CodeHash(code) of the code the gateway analysed. The
	// package runs only the code its own client sent, and refuses an answer
	// whose hash is not that code's.
	CodeHash    string    `json:"code_hash,omitempty"`
	DAG         *DAG      `json:"dag,omitempty"`
	ClientTools []string  `json:"client_tools,omitempty"`
	ToolsUsed   ToolsUsed `json:"tools_used,omitzero"`

	// approval_required
	ApprovalType string         `json:"approval_type,omitempty"`
	Description  string         `json:"description,omitempty"`
	Context      map[string]any `json:"context,omitempty"`
	Options      []string       `json:"options,omitempty"`

	// aborted
	Reason string `json:"reason,omitempty"`

	// error
	ErrorCode pmlerr.Code    `json:"error_code,omitempty"`
	Error     string         `json:"error,omitempty"`
	Details   map[string]any `json:"-"`
}

type answerFields Answer

// LocalAnswer is an execute_locally answer as the gateway's plain execute
// endpoint sends it (docs/protocol.md "Plain execute"): the fields of Answer
// the package reads of it, in Answer's order and under its names, so that
// its JSON is that of an Answer holding only them. It is encoded and
// decoded in one pass each, where Answer's MarshalJSON and UnmarshalJSON
// take two and three, on the hybrid path's hop (docs/performance.md "The
// hybrid path").
type LocalAnswer struct {
	Status     Status `json:"status"`
	WorkflowID string `json:"workflow_id,omitempty"`
	CodeHash   string `json:"code_hash,omitempty"`
}

// Answer is l as an Answer.
func (l LocalAnswer) Answer() Answer {
	return Answer{Status: l.Status, WorkflowID: l.WorkflowID, CodeHash: l.CodeHash}
}

// MarshalJSON writes the fields and then the details at the top level.
func (a Answer) MarshalJSON() ([]byte, error) {
	if body, ok := a.appendRunAnswer(nil); ok {
		return body, nil
	}
	body, err := Marshal(answerFields(a))
	if err != nil || len(a.Details) == 0 {
		return body, err
	}
	var merged map[string]any
	if err := json.Unmarshal(body, &merged); err != nil {
		return nil, err
	}
	for k, v := range a.Details {
		if _, taken := merged[k]; !taken {
			merged[k] = v
		}
	}
	return Marshal(merged)
}

// knownFields are the JSON names of Answer's own fields; anything else in an
// answer is a detail.
var knownFields = map[string]bool{
	"status": true, "result": true, "executed_locally": true, "workflow_id": true, "trace_id": true,
	"duration_ms": true, "capability": true, "logs": true, "code": true, "code_hash": true, "dag": true, "client_tools": true,
	"tools_used": true, "approval_type": true, "description": true, "context": true, "options": true,
	"reason": true, "error_code": true, "error": true,
}

// UnmarshalJSON reads the fields and keeps unknown top-level keys as details.
func (a *Answer) UnmarshalJSON(data []byte) error {
	var f answerFields
	if err := json.Unmarshal(data, &f); err != nil {
		return err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(data, &all); err != nil {
		return err
	}
	*a = Answer(f)
	for k, v := range all {
		if knownFields[k] {
			continue
		}
		var val any
		if err := json.Unmarshal(v, &val); err != nil {
			return err
		}
		if a.Details == nil {
			a.Details = map[string]any{}
		}
		a.Details[k] = val
	}
	return nil
}

// ErrorAnswer turns err into an error answer. Errors without a wire code are
// INTERNAL_ERROR.
func ErrorAnswer(err error, workflowID string) Answer {
	a := Answer{Status: StatusError, WorkflowID: workflowID}
	var pe *pmlerr.Error
	if errors.As(err, &pe) {
		a.ErrorCode, a.Error = pe.Code, pe.Message
		if len(pe.Details) > 0 {
			a.Details = map[string]any{}
			for k, v := range pe.Details {
				a.Details[k] = v
			}
		}
		return a
	}
	a.ErrorCode, a.Error = pmlerr.Internal, err.Error()
	return a
}

// Err returns the answer's error as a *pmlerr.Error, or nil unless Status is error.
func (a Answer) Err() error {
	if a.Status != StatusError {
		return nil
	}
	code := a.ErrorCode
	if code == "" {
		code = pmlerr.Internal
	}
	return &pmlerr.Error{Code: code, Message: a.Error, Details: a.Details}
}

// CodeHash names code on the wire: "sha256-" and the lowercase hex SHA-256
// of its UTF-8 bytes, the registry's integrity form.
func CodeHash(code string) string { return fqdn.Integrity([]byte(code)) }

// Bool returns a pointer to b, for the optional executed_locally flag.
func Bool(b bool) *bool { return &b }

// Float returns a pointer to f, for duration_ms.
func Float(f float64) *float64 { return &f }

// CallRequest is the input of the gateway's call tool.
type CallRequest struct {
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args,omitempty"`
	// Env carries BYOK keys an http catalog entry needs for this one call.
	// They are used for the call and never stored, logged or traced.
	Env map[string]string `json:"env,omitempty"`
	// Pin is the five-part FQDN the caller approved of the capability Tool
	// names (ExecuteOptions.Pins): another version is INTEGRITY_ERROR.
	Pin string `json:"pin,omitempty"`
	// Pins are the approved versions of the qualified capabilities Tool
	// calls, as deep as they nest (ExecuteOptions.Pins).
	Pins map[string]string `json:"pins,omitempty"`
}

// Validate checks a call request.
func (c CallRequest) Validate() error {
	if c.Tool == "" {
		return pmlerr.New(pmlerr.InvalidRequest, "call: tool is required (\"namespace:action\")")
	}
	if len(c.Args) > 0 && c.Args[0] != '{' && string(c.Args) != "null" {
		return pmlerr.New(pmlerr.InvalidRequest, "call: args must be a JSON object")
	}
	return nil
}

// DiscoverRequest is the input of discover.
type DiscoverRequest struct {
	Query string `json:"query,omitempty"`
	// Queries are the steps of a plan, one need each, answered together:
	// each its share of the top hits (docs/protocol.md "Gateway MCP
	// tools"). With Query, Query is the task they serve.
	Queries []string `json:"queries,omitempty"`
	Name    string   `json:"name,omitempty"`
	Pattern string   `json:"pattern,omitempty"`
	Limit   int      `json:"limit,omitempty"`
	// Schemas asks for every hit's input and output schemas even where
	// its declaration already says all they do (they are left out then).
	Schemas bool `json:"schemas,omitempty"`
	// Graph asks for the tenant's tool graph with the answer, for a
	// package that ranks the gateway's hits with its own tools.
	Graph bool `json:"graph,omitempty"`
}

// Neighbor is a tool used with another, and in how many runs.
type Neighbor struct {
	Tool  string `json:"tool"`
	Count int64  `json:"count"`
}

// DiscoveredTool is one discover hit.
type DiscoveredTool struct {
	ID          string          `json:"id"`
	Kind        string          `json:"kind"` // "tool" | "capability"
	Description string          `json:"description"`
	Routing     string          `json:"routing"`
	FQDN        string          `json:"fqdn,omitempty"`
	Owner       string          `json:"owner,omitempty"` // a capability's "org/project"
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
	// OutputSchema is the tool's declared result shape, when it has one,
	// else the one inferred from calls (OutputInferred).
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
	// OutputInferred says the result type of OutputSchema and Declaration
	// was inferred from successful calls, not declared by the tool.
	OutputInferred bool   `json:"output_inferred,omitempty"`
	Declaration    string `json:"declaration"`
	// Uses counts the times a capability ran: the runs of its shape that
	// were learned plus its calls (from code, the package's call path or
	// call), store.Capability.TimesRun; absent for tools.
	Uses *int64 `json:"uses,omitempty"`
	// Undescribed marks a capability learned without an intent: it ranks
	// below tools unless the query names it.
	Undescribed bool `json:"undescribed,omitempty"`
	// Repeated marks a habit: a capability run again for what it was
	// learned for (a learning run with its own intent, or a call by name;
	// store.Capability.Habit), which ranks by its words and tools; a skill
	// run once, or for different tasks, must also fit the query to rank so.
	Repeated bool `json:"repeated,omitempty"`
	// ToolsUsed are a capability's tools, and SuccessRate the share of its
	// recent runs that succeeded (absent before any was counted): discover
	// ranks by them (docs/how-it-works.md "Discover and the tool graph").
	ToolsUsed   []string `json:"tools_used,omitempty"`
	SuccessRate *float64 `json:"success_rate,omitempty"`
	// Learned is the words runs taught of the tool (tools.Info.Learned),
	// for a package that ranks again (graph: true); never the AI's.
	Learned string `json:"learned,omitempty"`
}

// DiscoverAnswer is discover's output.
type DiscoverAnswer struct {
	Tools []DiscoveredTool `json:"tools"`
	Total int              `json:"total"`
	// Servers is the state of each hosted server by name, so a server that
	// failed to start is told apart from one without tools.
	Servers map[string]ServerStatus `json:"servers,omitempty"`
	// Related answers a lookup by name: the tools most often used with it
	// in this tenant's runs, and how often (the tool graph).
	Related []Neighbor `json:"related,omitempty"`
	// Graph is the tenant's tool graph, each tool's most frequent
	// successors, when the request asked for it.
	Graph map[string][]Neighbor `json:"graph,omitempty"`
	// Context is, with Graph, what each hosted server says of itself
	// (tools.Info.Server) by namespace, for a package that ranks the
	// gateway's hits with its own tools.
	Context map[string]string `json:"context,omitempty"`
	// Boost is, with Graph, the tenant's learned lift of each tool for
	// this query (docs/how-it-works.md "Discover and the tool graph").
	Boost map[string]float64 `json:"boost,omitempty"`
}

// String renders a short description, for logs.
func (a Answer) String() string {
	if a.Status == StatusError {
		return fmt.Sprintf("%s %s: %s", a.Status, a.ErrorCode, a.Error)
	}
	return string(a.Status)
}
