package wire

import "github.com/modelcontextprotocol/go-sdk/mcp"

// ApprovalInput is the id of the approval form among a result's input
// requests (docs/protocol.md "approval_required").
const ApprovalInput = "pml_approval"

// The choices of the approval form.
const (
	ChoiceApprove = "approve"
	ChoiceAlways  = "always"
	ChoiceDeny    = "deny"
)

// CanElicit reports whether the client of s declared form-mode elicitation.
func CanElicit(s *mcp.ServerSession) bool {
	if s == nil {
		return false
	}
	ip := s.InitializeParams()
	if ip == nil || ip.Capabilities == nil || ip.Capabilities.Elicitation == nil {
		return false
	}
	// A client that names only URL mode cannot show a form.
	e := ip.Capabilities.Elicitation
	return e.Form != nil || e.URL == nil
}

// ApprovalForm is the form a person decides an approval on: message says
// what and why; alwaysTitle, when set, offers "always" with that title.
// It only carries a choice: nothing secret is ever typed into it, since
// the AI client could read it.
func ApprovalForm(message, alwaysTitle string) *mcp.ElicitParams {
	choices := []string{ChoiceApprove, ChoiceDeny}
	titles := []string{"Approve this execution", "Deny"}
	if alwaysTitle != "" {
		choices = []string{ChoiceApprove, ChoiceAlways, ChoiceDeny}
		titles = []string{"Approve this execution", alwaysTitle, "Deny"}
	}
	return &mcp.ElicitParams{
		Mode:    "form",
		Message: message,
		RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"decision": map[string]any{
					"type":      "string",
					"title":     "Your decision",
					"enum":      choices,
					"enumNames": titles,
				},
			},
			"required": []string{"decision"},
		},
	}
}

// FormContinue is the continue_workflow that the person's answer to the
// approval form of workflow id stands for. Anything but an accepted
// approve or always declines.
func FormContinue(code, id string, resp mcp.InputResponse) ExecuteRequest {
	decision := ChoiceDeny
	if r, ok := resp.(*mcp.ElicitResult); ok && r.Action == "accept" {
		decision, _ = r.Content["decision"].(string)
	}
	approved := decision == ChoiceApprove || decision == ChoiceAlways
	return ExecuteRequest{Code: code, ContinueWorkflow: &ContinueWorkflow{
		WorkflowID: id, Approved: Bool(approved), Always: decision == ChoiceAlways}}
}
