package workspace

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"time"

	"github.com/pml-go/pml/internal/analysis"
	"github.com/pml-go/pml/internal/approval"
	"github.com/pml-go/pml/internal/wire"
)

// pendingRun is what a paused workflow needs to resume: the code, the
// package's analysis of it, the execution's grants and where it stood when
// it paused. The configuration and routing rules are read again on resume:
// the approval itself may have changed them (an install, a key, "always").
type pendingRun struct {
	code       string
	intent     string
	args       json.RawMessage // the code's global args, as the request sent them
	opts       *wire.ExecuteOptions
	workflowID string // the run's one id: its first pause's, else the gateway's
	an         *analysis.Analysis
	// forward is true when the gateway has not seen the code yet (a server
	// plan that needed approval first).
	forward bool
	grants  *grants // this execution's approvals, kept across its pauses
	// parked is the run waiting in the call that paused it, nil for a
	// pause before the run.
	parked *liveRun
}

// pause stores the run as a pending workflow and answers approval_required.
// A run keeps one workflow id from its first answer to its last, across
// its pauses: the AI client and the traces follow one execution.
func (p *Workspace) pause(r pendingRun, pl *plan, items []approval.Item, journal *approval.Journal) wire.Answer {
	r.an, r.grants = pl.an, pl.grants
	if r.workflowID == "" {
		r.workflowID = newWorkflowID()
	}
	wf := p.workflows.Create(approval.Workflow[pendingRun]{ID: r.workflowID, Code: r.code, Items: items, Journal: journal, Run: r})
	req := approval.NewRequired(wf.ID, items)
	if c := p.configState(); len(req.Context.AlwaysAllow) > 0 && !c.Exists {
		req.Description += "\n" + approval.NoConfigNote(c)
	}
	return wire.Answer{
		Status:       wire.StatusApprovalRequired,
		ApprovalType: string(req.ApprovalType),
		WorkflowID:   wf.ID,
		Description:  req.Description,
		Context:      approvalContext(req.Context),
		Options:      req.Options,
	}
}

func approvalContext(c approval.RequiredContext) map[string]any {
	out := map[string]any{"items": c.Items}
	if len(c.AlwaysAllow) > 0 {
		out["always_allow"] = c.AlwaysAllow
	}
	return out
}

// continueWorkflow answers an approval_required, locally: the gateway never
// sees a continue_workflow. pl holds the configuration read by execute; it
// is read again only when an approved item changed it.
func (p *Workspace) continueWorkflow(ctx context.Context, req wire.ExecuteRequest, pl *plan, start time.Time) wire.Answer {
	cw := req.ContinueWorkflow
	wf, err := p.workflows.Take(cw.WorkflowID)
	if err != nil {
		return wire.ErrorAnswer(err, cw.WorkflowID)
	}
	r := wf.Run
	if err := wf.CheckCode(req.Code); err != nil {
		if r.parked != nil {
			r.parked.resume(false) // the workflow is spent: its run must not wait on
		}
		return wire.ErrorAnswer(err, cw.WorkflowID)
	}
	if !*cw.Approved {
		if r.parked == nil {
			return declinedAnswer(wf.Items, cw.WorkflowID, "the user declined; nothing ran")
		}
		if r.parked.resume(false) {
			return r.parked.await(ctx).answer
		}
		return declinedAnswer(wf.Items, cw.WorkflowID, fmt.Sprintf("the user declined %s; the run stopped before that call", itemSubjects(wf.Items)))
	}
	if r.grants == nil {
		r.grants = newGrants()
	}
	added, changed, err := p.approveItems(ctx, wf.Items, r.grants, cw.Always)
	if err != nil {
		return wire.ErrorAnswer(err, cw.WorkflowID)
	}
	if changed || len(added) > 0 {
		if err := p.readConfig(pl); err != nil {
			return wire.ErrorAnswer(err, cw.WorkflowID)
		}
	}
	pl.an, pl.grants = r.an, r.grants
	pl.toolsKnown = true // checked before the run's first pause
	p.readRules(ctx, pl)
	var ans wire.Answer
	switch {
	case r.forward:
		ans = p.forward(ctx, r, pl, start)
	case r.parked != nil && r.parked.resume(true):
		ans = p.awaitRun(ctx, r, pl, wf.Journal)
	default:
		// Not parked (a pause before the run), or the parked run ended
		// meanwhile: run the code, replaying what it did before.
		ans = p.startLocal(ctx, r, pl, wf.Journal, start)
	}
	// A forwarded plan's answer carries the gateway's id for its run: the
	// AI client keeps the one it was asked to continue.
	if ans.WorkflowID != "" {
		ans.WorkflowID = cw.WorkflowID
	}
	if len(added) > 0 {
		ans.Details = maps.Clone(ans.Details)
		if ans.Details == nil {
			ans.Details = map[string]any{}
		}
		ans.Details["always_allowed"] = added
	}
	return ans
}

// approveItems puts approved items in force for the execution whose grants
// are g: installs, keys, accepted registry entries, the tools it may call;
// with always, the tools also join the allow list. It returns the tools so
// added and whether the local configuration changed.
func (p *Workspace) approveItems(ctx context.Context, items []approval.Item, g *grants, always bool) (added []string, changed bool, err error) {
	for _, it := range items {
		if err := p.apply(ctx, it); err != nil {
			return nil, false, err
		}
		changed = changed || changesConfig(it)
		g.grant(it)
	}
	if always {
		if added, err = p.alwaysAllow(approval.AlwaysAllow(items)); err != nil {
			return nil, false, err
		}
	}
	return added, changed, nil
}

// changesConfig reports whether applying it changes the local tools: an
// install adds a server, a key may complete a configured one.
func changesConfig(it approval.Item) bool {
	return it.Type == approval.TypeDependency || it.Type == approval.TypeAPIKey
}

// apply performs an approved item's action; a tool permission is recorded
// in the execution's grants instead.
func (p *Workspace) apply(ctx context.Context, it approval.Item) error {
	switch it.Type {
	case approval.TypeDependency:
		if it.Dependency != nil {
			return p.install(ctx, *it.Dependency)
		}
	case approval.TypeAPIKey:
		if err := p.env.Reload(); err != nil {
			return fmt.Errorf("reloading .env: %w", err)
		}
		p.invalidateLocal() // ${VAR}s of configured servers may resolve now
	case approval.TypeIntegrity:
		return p.acceptIntegrity(it)
	}
	return nil
}

// ExecuteApproving runs req and approves every approval_required it meets
// (`pml exec --approve`), telling report first what it approves, in the
// command line's terms (approval.CommandLineApproved). Bounded, so a key
// that stays missing cannot loop forever.
func (p *Workspace) ExecuteApproving(ctx context.Context, req wire.ExecuteRequest, report func(approved []string)) wire.Answer {
	ans := p.Execute(ctx, req)
	for range 10 {
		if ans.Status != wire.StatusApprovalRequired {
			return ans
		}
		if stop, ok := p.stillMissingKeys(ans); ok {
			return stop
		}
		report(approval.CommandLineApproved(answerItems(ans), p.configState()))
		ans = p.Execute(ctx, wire.ExecuteRequest{Code: req.Code, ContinueWorkflow: &wire.ContinueWorkflow{WorkflowID: ans.WorkflowID, Approved: wire.Bool(true)}})
	}
	return ans
}
