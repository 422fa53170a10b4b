package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/pml-go/pml/internal/approval"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/registry"
	"github.com/pml-go/pml/internal/registry/fqdn"
	"github.com/pml-go/pml/internal/runner"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/wire"
)

// A client that talks to the gateway without a package (a remote MCP client
// signed in with a key or OAuth) has no lockfile and no person-facing
// approvals of its own, so the gateway asks for it: the first run of
// another org's skill, at any depth, needs the person's approval of that
// version, and runs pinned to it (docs/security.md "Tenants and names").
// An "always" approval is kept for the project, bound to the version's
// five-part FQDN; a new version asks again. The run waiting for the answer
// is kept in the store, so any replica continues it.

// foreignSkill is another org's capability a run would call.
type foreignSkill struct {
	ID    string `json:"id"`   // as the code calls it
	FQDN  string `json:"fqdn"` // the version that would run
	Owner string `json:"owner"`
}

// pendingRun is what a run waiting for an approval keeps.
type pendingRun struct {
	Request wire.ExecuteRequest `json:"request"`
	Skills  []foreignSkill      `json:"skills"`
}

// foreignSkills walks the capabilities code calls, and the ones their code
// calls as deep as a run may nest, and answers those of other orgs than the
// caller's.
func (s *Service) foreignSkills(ctx context.Context, c Caller, tools []string) ([]foreignSkill, error) {
	var out []foreignSkill
	seen := map[string]bool{}
	var walk func(ids []string, depth int) error
	walk = func(ids []string, depth int) error {
		for _, id := range ids {
			if seen[id] {
				continue
			}
			seen[id] = true
			e, ok, err := s.capability(ctx, c, id)
			if err != nil || !ok || e.Capability == nil {
				if err != nil {
					return err
				}
				continue
			}
			if e.Capability.Scope.Org != c.Scope.Org {
				out = append(out, foreignSkill{ID: id, FQDN: e.FQDN(), Owner: registry.Owner(e.Capability.Scope)})
			}
			if depth >= runner.MaxDepth {
				continue
			}
			an, err := s.analyzer.Analyze(string(e.Body))
			if err != nil {
				continue // it cannot run either: its call says why
			}
			if err := walk(an.Tools, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	return out, walk(tools, 0)
}

// approveForeign pins the other orgs' skills a package-less caller's run
// calls to the versions its project approved, and answers the approval to
// ask for the others (ok false). A package checks its own lockfile and
// sends its pins; the gateway asks nothing of it.
func (s *Service) approveForeign(ctx context.Context, c *Caller, req wire.ExecuteRequest, tools []string, workflowID string) (wire.Answer, bool) {
	if c.IsPackage || s.store == nil {
		return wire.Answer{}, true
	}
	skills, err := s.foreignSkills(ctx, *c, tools)
	if err != nil || len(skills) == 0 {
		if err != nil {
			return wire.ErrorAnswer(err, workflowID), false
		}
		return wire.Answer{}, true
	}
	approved, err := s.store.ApprovedSkills(ctx, c.Scope, fqdnsOf(skills))
	if err != nil {
		return wire.ErrorAnswer(pmlerr.Wrap(pmlerr.Internal, err), workflowID), false
	}
	var ask []foreignSkill
	for _, sk := range skills {
		if !approved[sk.FQDN] && !slices.Contains(c.approvedOnce, sk.FQDN) {
			ask = append(ask, sk)
		}
	}
	if len(ask) == 0 {
		c.Pins = pinsOf(c.Pins, skills)
		return wire.Answer{}, true
	}
	payload, err := json.Marshal(pendingRun{Request: req, Skills: skills})
	if err == nil {
		err = s.store.PutPendingRun(ctx, c.Scope, workflowID, payload)
	}
	if err != nil {
		return wire.ErrorAnswer(pmlerr.Wrap(pmlerr.Internal, err), workflowID), false
	}
	return skillApprovalAnswer(workflowID, ask), false
}

// continueForeign continues a run that waited for the approval of other
// orgs' skills: once, by the project that asked, pinned to the versions
// the person saw. Declined, nothing runs.
func (s *Service) continueForeign(ctx context.Context, c Caller, cw *wire.ContinueWorkflow, start time.Time) wire.Answer {
	notHere := func() wire.Answer {
		return s.fail(start, "server", wire.ErrorAnswer(pmlerr.New(pmlerr.WorkflowNotFound,
			"workflow %q is not pending here: it was answered already, expired (after %s), or is another project's; a package continues the approvals it asked for itself",
			cw.WorkflowID, store.MaxPendingAge), cw.WorkflowID))
	}
	if c.IsPackage || s.store == nil {
		return notHere()
	}
	raw, err := s.store.TakePendingRun(ctx, c.Scope, cw.WorkflowID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return notHere()
	case err != nil:
		return s.fail(start, "server", wire.ErrorAnswer(pmlerr.Wrap(pmlerr.Internal, err), cw.WorkflowID))
	}
	var p pendingRun
	if err := json.Unmarshal(raw, &p); err != nil {
		return s.fail(start, "server", wire.ErrorAnswer(pmlerr.Wrap(pmlerr.Internal, err), cw.WorkflowID))
	}
	if !*cw.Approved {
		return wire.Answer{Status: wire.StatusAborted, WorkflowID: cw.WorkflowID, Reason: "the user declined; nothing ran"}
	}
	if cw.Always {
		for _, sk := range p.Skills {
			if err := s.store.ApproveSkill(ctx, c.Scope, store.SkillApproval{FQDN: sk.FQDN, ApprovedBy: c.Who}); err != nil {
				return s.fail(start, "server", wire.ErrorAnswer(pmlerr.Wrap(pmlerr.Internal, err), cw.WorkflowID))
			}
		}
	}
	c.approvedOnce = fqdnsOf(p.Skills)
	return s.run(ctx, c, p.Request, cw.WorkflowID, start)
}

// skillApprovalAnswer asks for the versions of skills.
func skillApprovalAnswer(workflowID string, skills []foreignSkill) wire.Answer {
	items := make([]approval.Item, 0, len(skills))
	lines := make([]string, 0, len(skills))
	for _, sk := range skills {
		n, _ := fqdn.Parse(sk.FQDN)
		desc := fmt.Sprintf("Run %s, a skill of %s (another org: its code, not yours), at version %s? Its owner can publish new code under the name; a new version asks again.",
			sk.ID, sk.Owner, sk.FQDN)
		items = append(items, approval.Item{Type: approval.TypeIntegrity, Tool: sk.ID, Description: desc,
			Integrity: &approval.Integrity{FQDN: sk.FQDN, NewHash: n.Hash}})
		lines = append(lines, desc)
	}
	desc := strings.Join(lines, "\n") + "\nAnswer continue_workflow with approved: true to run it this once, always: true to also approve this version for later runs of this project, or approved: false."
	return wire.Answer{Status: wire.StatusApprovalRequired, ApprovalType: string(approval.TypeIntegrity), WorkflowID: workflowID,
		Description: desc, Context: map[string]any{"items": items}, Options: []string{approval.OptionContinue, approval.OptionAlways, approval.OptionAbort}}
}

func fqdnsOf(skills []foreignSkill) []string {
	out := make([]string, 0, len(skills))
	for _, sk := range skills {
		out = append(out, sk.FQDN)
	}
	return out
}

// pinsOf adds the skills' versions to pins (a pin the caller sent stays).
func pinsOf(pins map[string]string, skills []foreignSkill) map[string]string {
	out := maps.Clone(pins)
	if out == nil {
		out = map[string]string{}
	}
	for _, sk := range skills {
		if _, set := out[sk.ID]; !set {
			out[sk.ID] = sk.FQDN
		}
	}
	return out
}

// SkillApprovals lists scope's kept approvals of other orgs' skills, for
// the operator (pml gateway approvals list).
func SkillApprovals(ctx context.Context, st store.Store, scope store.Scope) ([]store.SkillApproval, error) {
	out, err := st.SkillApprovals(ctx, scope)
	if err != nil {
		return nil, fmt.Errorf("listing the approvals of %s/%s: %w", scope.Org, scope.Project, err)
	}
	return out, nil
}

// RevokeSkillApproval deletes one of scope's kept approvals (pml gateway
// approvals revoke): the next run of that version asks again.
func RevokeSkillApproval(ctx context.Context, st store.Store, scope store.Scope, version string) error {
	if n, err := fqdn.Parse(version); err != nil || n.Hash == "" {
		return pmlerr.New(pmlerr.InvalidRequest, "%q is not a five-part FQDN (org.project.namespace.action.hash)", version)
	}
	if err := st.RevokeSkill(ctx, scope, version); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return pmlerr.New(pmlerr.InvalidRequest, "%s/%s has no approval of %s", scope.Org, scope.Project, version)
		}
		return fmt.Errorf("revoking %s for %s/%s: %w", version, scope.Org, scope.Project, err)
	}
	return nil
}

// callForeignCheck refuses a package-less caller's call tool on another
// org's skill it has not approved: a single call has no workflow to ask in.
func (s *Service) callForeignCheck(ctx context.Context, c *Caller, tool string) error {
	if c.IsPackage || s.store == nil {
		return nil
	}
	skills, err := s.foreignSkills(ctx, *c, []string{tool})
	if err != nil || len(skills) == 0 {
		return err
	}
	approved, err := s.store.ApprovedSkills(ctx, c.Scope, fqdnsOf(skills))
	if err != nil {
		return pmlerr.Wrap(pmlerr.Internal, err)
	}
	for _, sk := range skills {
		if !approved[sk.FQDN] {
			return pmlerr.New(pmlerr.PermissionDenied, "%s is %s's skill at version %s, which this project has not approved: run it through execute, which asks",
				sk.ID, sk.Owner, sk.FQDN).With("tool", sk.ID).With("fqdn", sk.FQDN)
		}
	}
	c.Pins = pinsOf(c.Pins, skills)
	return nil
}
