package pkgclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os/exec"
	"slices"
	"time"

	"github.com/pml-go/pml/internal/approval"
	"github.com/pml-go/pml/internal/lockfile"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/registry"
	regclient "github.com/pml-go/pml/internal/registry/client"
	"github.com/pml-go/pml/internal/registry/fqdn"
	"github.com/pml-go/pml/internal/routing"
	"github.com/pml-go/pml/internal/sandbox"
	"github.com/pml-go/pml/internal/tools"
	"github.com/pml-go/pml/internal/tools/local"
	"github.com/pml-go/pml/internal/wire"
)

// pendingRun is what a paused workflow needs to resume: the code and where
// it stood when it paused.
type pendingRun struct {
	code       string
	intent     string
	opts       *wire.ExecuteOptions
	workflowID string   // the gateway's, once it answered execute_locally
	tools      []string // the static plan
	// forward is true when the gateway has not seen the code yet (a server
	// plan that needed approval first).
	forward bool
	offline bool
	grants  *grants // this execution's approvals, kept across its pauses
}

// needApproval halts a run at a call the static plan could not see.
type needApproval struct{ item approval.Item }

func (n needApproval) Error() string { return "approval required: " + n.item.Description }

func isHalt(err error) bool {
	var h *sandbox.HaltError
	return errors.As(err, &h)
}

// denied refuses a plan with a denied tool before anything runs.
func denied(perms approval.Permissions, toolIDs []string) error {
	for _, t := range toolIDs {
		if perms.Decide(t) == approval.Deny {
			return pmlerr.New(pmlerr.PermissionDenied, "%s is denied by the permissions in %s", t, ConfigFile).With("tool", t)
		}
	}
	return nil
}

// askItems are the tool permissions the plan still needs in this execution.
func askItems(perms approval.Permissions, g *grants, toolIDs []string) []approval.Item {
	var items []approval.Item
	for _, t := range toolIDs {
		if perms.Decide(t) == approval.Ask && !g.tool(t) {
			items = append(items, approval.ToolPermissionItem(t))
		}
	}
	return items
}

// planItems checks every tool of a local plan before anything runs: tool
// permissions, client tools whose server is not installed (installed
// without asking when the tool is allowed), and missing API keys.
func (p *Package) planItems(ctx context.Context, cfg Config, rules routing.Rules, g *grants, toolIDs []string) ([]approval.Item, error) {
	items := askItems(cfg.Permissions, g, toolIDs)
	_, local, _ := p.refreshConfig()
	seen := map[string]bool{}
	for _, t := range toolIDs {
		ns, _ := tools.Split(t)
		if seen[ns] {
			continue
		}
		seen[ns] = true
		if rules.Route(t) == routing.Server {
			e, ok, item, err := p.byokServer(ctx, ns)
			switch {
			case err != nil:
				return nil, err
			case item != nil:
				items = append(items, *item)
			case ok:
				if missing := p.env.Missing(e.Metadata.EnvRequired); len(missing) > 0 {
					items = append(items, approval.APIKeyItem(ns, missing))
				}
			}
			continue
		}
		if missing := p.missingKeys(ns); len(missing) > 0 {
			items = append(items, approval.APIKeyItem(ns, missing))
		}
		_, installed := p.deps.Installed(ns)
		if _, ok := local.Provider(ns); ok && !installed {
			continue // configured in .pml.json, or a built-in
		}
		// Installed or not, the catalog entry is revalidated against the
		// lockfile on every plan, so a changed entry is caught.
		entry, found, err := p.catalogEntry(ctx, ns)
		if err != nil {
			return nil, err
		}
		if !found || entry.Type != registry.TypeStdio {
			continue // the call will be UNKNOWN_TOOL, naming the nearest tools
		}
		dep, err := dependencyOf(ns, entry)
		if err != nil {
			return nil, err
		}
		if item, err := p.trusted(entry); err != nil {
			return nil, err
		} else if item != nil {
			items = append(items, *item)
			continue
		}
		if installed || cfg.Permissions.Decide(t) == approval.Allow {
			if err := p.install(ctx, dep); err != nil {
				return nil, err
			}
			continue
		}
		items = append(items, approval.DependencyItem(t, dep))
		if missing := p.env.Missing(dep.EnvRequired); len(missing) > 0 {
			items = append(items, approval.APIKeyItem(ns, missing))
		}
	}
	return items, nil
}

// missingKeys are the ${VAR}s of a configured server, or the envRequired of
// an installed one, that are set nowhere.
func (p *Package) missingKeys(server string) []string {
	p.mu.Lock()
	missing := slices.Clone(p.missing[server])
	p.mu.Unlock()
	if rec, ok := p.deps.Installed(server); ok {
		missing = append(missing, p.env.Missing(rec.EnvRequired)...)
	}
	return missing
}

// install records an approved dependency so it runs locally from now on.
// Its command must exist on this machine; progress goes to the log (stderr).
func (p *Package) install(ctx context.Context, dep approval.Dependency) error {
	if rec, ok := p.deps.Installed(dep.Name); ok && rec.Command == dep.Command &&
		slices.Equal(rec.Args, dep.Args) && slices.Equal(rec.EnvRequired, dep.EnvRequired) {
		return nil
	}
	p.log.Info("installing MCP server", "server", dep.Name, "command", dep.Command, "args", dep.Args)
	if _, err := exec.LookPath(dep.Command); err != nil {
		return pmlerr.New(pmlerr.ToolError, "cannot install %s: %q is not on this machine's PATH", dep.Name, dep.Command).With("server", dep.Name)
	}
	if err := p.deps.Record(approval.DepRecord{Name: dep.Name, Version: dep.Version, Command: dep.Command,
		Args: dep.Args, EnvRequired: dep.EnvRequired, InstalledAt: time.Now().UTC()}); err != nil {
		return fmt.Errorf("recording %s in deps.json: %w", dep.Name, err)
	}
	p.invalidateLocal()
	p.log.Info("installed MCP server", "server", dep.Name)
	return nil
}

// pause stores the run as a pending workflow and answers approval_required.
func (p *Package) pause(r pendingRun, items []approval.Item, journal *approval.Journal) wire.Answer {
	wf := p.workflows.Create(approval.Workflow{Code: r.code, Items: items, Journal: journal, Payload: r})
	req := approval.NewRequired(wf.ID, items)
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
// sees a continue_workflow.
func (p *Package) continueWorkflow(ctx context.Context, req wire.ExecuteRequest, start time.Time) wire.Answer {
	cw := req.ContinueWorkflow
	wf, err := p.workflows.Take(cw.WorkflowID)
	if err != nil {
		return wire.ErrorAnswer(err, cw.WorkflowID)
	}
	if err := wf.CheckCode(req.Code); err != nil {
		return wire.ErrorAnswer(err, cw.WorkflowID)
	}
	if !*cw.Approved {
		for _, it := range wf.Items {
			if it.Type == approval.TypeIntegrity {
				return wire.ErrorAnswer(pmlerr.New(pmlerr.IntegrityError, "rejected a changed registry entry: %s", it.Description), cw.WorkflowID)
			}
		}
		return wire.Answer{Status: wire.StatusAborted, WorkflowID: cw.WorkflowID, Reason: "the user declined; nothing ran"}
	}
	r := wf.Payload.(pendingRun)
	if r.grants == nil {
		r.grants = newGrants()
	}
	for _, it := range wf.Items {
		if err := p.apply(ctx, it); err != nil {
			return wire.ErrorAnswer(err, cw.WorkflowID)
		}
		r.grants.grant(it)
	}
	var added []string
	if cw.Always {
		if added, err = p.alwaysAllow(approval.AlwaysAllow(wf.Items)); err != nil {
			return wire.ErrorAnswer(err, cw.WorkflowID)
		}
	}
	var ans wire.Answer
	if r.forward {
		an, err := p.analyzer.Analyze(r.code)
		if err != nil {
			return wire.ErrorAnswer(err, cw.WorkflowID)
		}
		ans = p.forward(ctx, wire.ExecuteRequest{Code: r.code, Intent: r.intent, Options: r.opts}, an, r.grants, start)
	} else {
		ans = p.startLocal(ctx, r, wf.Journal, start)
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

// apply performs an approved item's action; a tool permission is recorded
// in the execution's grants instead.
func (p *Package) apply(ctx context.Context, it approval.Item) error {
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

// gate checks each call as it happens, for what the static plan could not
// see (a dynamic mcp[x] access, an untaken branch): a denied tool fails; one
// not approved in this execution halts the run so the person can decide.
// A call the tool itself refuses unapproved (a secret read, a hook write)
// halts for an approval of that one call, and runs again with it.
func (p *Package) gate(perms approval.Permissions, next tools.CallFunc) tools.CallFunc {
	return func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		g := grantsFrom(ctx)
		switch perms.Decide(tool) {
		case approval.Deny:
			return nil, pmlerr.New(pmlerr.PermissionDenied, "%s is denied by the permissions in %s", tool, ConfigFile).With("tool", tool)
		case approval.Ask:
			if !g.tool(tool) {
				return nil, &sandbox.HaltError{Err: needApproval{item: approval.ToolPermissionItem(tool)}}
			}
		}
		// Arguments are hashed only when some single call was approved.
		approved := g.hasCalls() && g.call(tool, approval.ArgsHash(args))
		out, err := next(local.WithApproval(ctx, approved), tool, args)
		var na *local.NeedsApproval
		if !approved && g != nil && errors.As(err, &na) {
			return nil, &sandbox.HaltError{Err: needApproval{item: approval.CallItem(tool, approval.ArgsHash(args), na.Kind, na.Path, na.Reason)}}
		}
		return out, err
	}
}

// dependencyOf is what installing a verified stdio catalog entry records.
func dependencyOf(name string, e regclient.Entry) (approval.Dependency, error) {
	in := e.Metadata.Install
	if in == nil || in.Command == "" {
		return approval.Dependency{}, pmlerr.New(pmlerr.ToolError, "catalog entry %s has no install command", e.FQDN).With("server", name)
	}
	return approval.Dependency{Name: name, Command: in.Command, Args: in.Args, EnvRequired: in.EnvRequired}, nil
}

// acceptIntegrity records an approved registry entry change in the lockfile.
func (p *Package) acceptIntegrity(it approval.Item) error {
	lf, err := p.lockfile()
	if err != nil {
		return err
	}
	return regclient.Accept(lf, it)
}

// lockfile opens .pml/mcp.lock, dropping the entries of tools the
// permissions now deny. A tool in no list is "ask", so its entry stays:
// dropping it would make the next fetch look new and hide a changed entry.
func (p *Package) lockfile() (*lockfile.Lockfile, error) {
	perms := p.permissions()
	return lockfile.Open(p.ws, func(base string) bool {
		n, err := fqdn.Parse(base)
		if err != nil {
			return false
		}
		id := n.Namespace + ":" + n.Action
		if n.Org == "pml" && n.Project == "mcp" {
			id = n.Namespace + ":*" // a server entry stands for all its tools
		}
		return perms.Decide(id) != approval.Deny
	})
}

func (p *Package) permissions() approval.Permissions {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cfg.Permissions
}

// ExecuteApproving runs req and approves every approval_required it meets
// (`pml exec --approve`), telling report about each one first. Bounded, so a
// key that stays missing cannot loop forever.
func (p *Package) ExecuteApproving(ctx context.Context, req wire.ExecuteRequest, report func(wire.Answer)) wire.Answer {
	ans := p.Execute(ctx, req)
	for range 10 {
		if ans.Status != wire.StatusApprovalRequired {
			return ans
		}
		report(ans)
		ans = p.Execute(ctx, wire.ExecuteRequest{Code: req.Code, ContinueWorkflow: &wire.ContinueWorkflow{WorkflowID: ans.WorkflowID, Approved: wire.Bool(true)}})
	}
	return ans
}
