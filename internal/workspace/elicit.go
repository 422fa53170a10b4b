package workspace

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/approval"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/textcut"
	"github.com/pml-go/pml/internal/wire"
)

// The approval flows of .pml.json "approvals" (docs/security.md "Trust: approvals and secrets").
const (
	// ApprovalsElicitation asks the person through the AI client's
	// elicitation, and refuses to run what needs an approval when the
	// client cannot elicit.
	ApprovalsElicitation = "elicitation"
	// ApprovalsElicitationPreferred elicits when the client can, and
	// answers approval_required to the AI otherwise. The default.
	ApprovalsElicitationPreferred = "elicitation_preferred"
	// ApprovalsAgent always answers approval_required: the AI client asks
	// its user and continues the workflow.
	ApprovalsAgent = "agent"
)

var approvalFlows = []string{ApprovalsElicitation, ApprovalsElicitationPreferred, ApprovalsAgent}

// executeResult answers an execute that came over MCP. An approval the run
// needs goes to the person through the AI client's elicitation when the
// client can elicit: the result asks for the approval form, and the client
// calls again with the person's answer, which continues the paused run
// (the SDK sends an elicitation/create for clients that predate input
// requests). The AI never sees the question, so it cannot approve its own
// plan. Otherwise the answer is approval_required, for the AI client to
// ask its user and continue.
func (p *Workspace) executeResult(ctx context.Context, req *mcp.CallToolRequest, er wire.ExecuteRequest) *mcp.CallToolResult {
	answered := req.Params.RequestState != ""
	if answered {
		er = wire.FormContinue(er.Code, req.Params.RequestState, req.Params.InputResponses[wire.ApprovalInput])
	}
	ans := p.Execute(ctx, er)
	if ans.Status != wire.StatusApprovalRequired {
		return wire.AnswerResult(ans)
	}
	cfg, _, _ := p.refreshConfig()
	switch {
	case cfg.Approvals == ApprovalsAgent:
		return wire.AnswerResult(ans)
	case answered:
		// Approving a form cannot supply a key: only a person editing .env
		// can, so a key still missing is said at once.
		if stop, ok := p.stillMissingKeys(ans); ok {
			p.dropWorkflow(ctx, ans.WorkflowID)
			return wire.AnswerResult(stop)
		}
	}
	if wire.CanElicit(req.Session) {
		return &mcp.CallToolResult{
			InputRequests: mcp.InputRequestMap{wire.ApprovalInput: p.approvalForm(er.Code, ans)},
			RequestState:  ans.WorkflowID,
		}
	}
	if cfg.Approvals == ApprovalsElicitation {
		p.dropWorkflow(ctx, ans.WorkflowID)
		return wire.AnswerResult(wire.ErrorAnswer(pmlerr.New(pmlerr.ElicitationRequired,
			"this code needs your approval (%s), and %s says approvals are asked by elicitation, which this AI client does not support; nothing ran past that point. "+
				"Use a client that supports elicitation, or set \"approvals\" to %q or %q",
			ans.ApprovalType, ConfigFile, ApprovalsElicitationPreferred, ApprovalsAgent).With("approval_type", ans.ApprovalType), ans.WorkflowID))
	}
	return wire.AnswerResult(ans)
}

// dropWorkflow declines a workflow nobody will continue, so a run parked
// under it ends now.
func (p *Workspace) dropWorkflow(ctx context.Context, id string) {
	p.Execute(ctx, wire.ExecuteRequest{ContinueWorkflow: &wire.ContinueWorkflow{WorkflowID: id, Approved: wire.Bool(false)}})
}

// approvalForm is the form the person decides ans on: what needs approval
// and why, and the code. It only carries a choice: a key is never typed
// into it, since the AI client could read it; the person is told where to
// put it instead.
func (p *Workspace) approvalForm(code string, ans wire.Answer) *mcp.ElicitParams {
	always := ""
	if slices.Contains(ans.Options, approval.OptionAlways) {
		always = "Always allow (add to the allow list of " + ConfigFile + ")"
	}
	return wire.ApprovalForm(p.approvalMessage(code, ans), always)
}

func (p *Workspace) approvalMessage(code string, ans wire.Answer) string {
	var b strings.Builder
	b.WriteString("PML needs your approval to run this code.\n\n")
	for _, it := range answerItems(ans) {
		fmt.Fprintf(&b, "- [%s] %s\n", it.Type, it.Description)
		switch {
		case it.Type == approval.TypeAPIKey:
			fmt.Fprintf(&b, "  Add %s to %s (never into this form), then approve.\n", keyLines(it.Keys), filepath.Join(p.ws, ".env"))
		case it.Dependency != nil:
			fmt.Fprintf(&b, "  Installs and runs: %s\n", strings.Join(append([]string{it.Dependency.Command}, it.Dependency.Args...), " "))
		}
	}
	b.WriteString("\nThe code:\n")
	b.WriteString(textcut.Prefix(code, maxFormCode))
	if len(code) > maxFormCode {
		fmt.Fprintf(&b, "\n… (%d more bytes)", len(code)-maxFormCode)
	}
	return b.String()
}

// maxFormCode bounds the code shown in an approval form.
const maxFormCode = 4000
