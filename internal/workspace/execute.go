package workspace

import (
	"context"
	"encoding/json"
	"time"

	"github.com/pml-go/pml/internal/approval"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/registry"
	"github.com/pml-go/pml/internal/routing"
	"github.com/pml-go/pml/internal/runner"
	"github.com/pml-go/pml/internal/sandbox"
	"github.com/pml-go/pml/internal/tools"
	"github.com/pml-go/pml/internal/wire"
)

// Execute is the package's execute tool (docs/architecture.md). The code is
// analysed here first (the analyser is built in): a denied tool stops it before
// anything runs, and a server-only plan that needs approval asks before the
// gateway runs it. Then it is forwarded; on execute_locally every tool of the
// plan is checked (permissions, dependencies, keys, integrity) and the code
// runs in the local sandbox with per-call hybrid routing. When the gateway is
// unreachable, code whose tools are all client-routed still runs here.
//
// Every answer leaves with the .env values (and the package's key) masked,
// unless the person approved reading a .env file in that execution.
func (p *Workspace) Execute(ctx context.Context, req wire.ExecuteRequest) wire.Answer {
	ctx, scope := withAnswerScope(ctx)
	ans := p.execute(ctx, req)
	if scope.reveal {
		return ans
	}
	_, mask := p.secretFilters()
	return maskAnswer(ans, mask)
}

func (p *Workspace) execute(ctx context.Context, req wire.ExecuteRequest) wire.Answer {
	start := time.Now()
	var pl plan
	if err := p.readConfig(&pl); err != nil {
		return wire.ErrorAnswer(err, "")
	}
	p.warnPermissions(ctx, pl.cfg, pl.local)
	if req.ContinueWorkflow != nil {
		return p.continueWorkflow(ctx, req, &pl, start)
	}
	if err := p.analyse(&pl, req.Code); err != nil {
		return wire.ErrorAnswer(err, "")
	}
	if err := denied(pl.cfg.Permissions, pl.an.Tools); err != nil {
		return wire.ErrorAnswer(err, "")
	}
	p.readRules(ctx, &pl)
	if err := p.unknownTool(ctx, &pl); err != nil {
		return wire.ErrorAnswer(err, "")
	}
	// A server-only plan is asked for here, before the gateway runs it; so is
	// a capability called by its qualified name (another org's code, which
	// the gateway may run at once), whatever the plan.
	pl.grants = newGrants()
	ask := qualifiedTools(pl.an.Tools)
	if pl.serverOnly() {
		ask = pl.an.Tools
	}
	r := pendingRun{code: req.Code, intent: req.Intent, args: req.Args, opts: req.Options, forward: true}
	if items := askItems(pl.cfg.Permissions, pl.grants, ask, p.capabilityTools(ctx, &pl)); len(items) > 0 {
		return p.pause(r, &pl, items, nil)
	}
	return p.forward(ctx, r, &pl, start)
}

// qualifiedTools are the tools of ids that name a capability with its owner.
func qualifiedTools(ids []string) []string {
	var out []string
	for _, id := range ids {
		if registry.IsQualified(id) {
			out = append(out, id)
		}
	}
	return out
}

// forward sends the code to the gateway and runs it here on execute_locally,
// with the execution's grants so far. What runs is the code the AI client
// sent, checked against the package's own analysis of it: the answer only
// says that the code must run here. Its code, tool list and DAG are never
// used, so a gateway (or anything between it and us) cannot choose what runs
// on this machine or what is approved.
func (p *Workspace) forward(ctx context.Context, r pendingRun, pl *plan, start time.Time) wire.Answer {
	pins, items, err := p.pinQualified(ctx, qualifiedTools(pl.an.Tools))
	switch {
	case err != nil:
		return wire.ErrorAnswer(err, "")
	case len(items) > 0:
		return p.pause(r, pl, items, nil)
	}
	ans, err := p.gw.Execute(ctx, p.noLearn(wire.ExecuteRequest{Code: r.code, Intent: r.intent, Args: r.args, Options: withPins(r.opts, pins)}))
	switch {
	case err != nil && isNetworkError(err):
		return p.executeOffline(ctx, r, pl, err, start)
	case err != nil:
		return wire.ErrorAnswer(err, "")
	case ans.Status != wire.StatusExecuteLocally:
		return ans
	}
	if err := checkDelegated(r.code, ans); err != nil {
		p.log.Warn("refused an execute_locally answer", "err", err)
		return wire.ErrorAnswer(err, ans.WorkflowID)
	}
	r.forward = false
	if r.workflowID == "" { // a run paused before it was forwarded keeps its id
		r.workflowID = ans.WorkflowID
	}
	return p.startLocal(ctx, r, pl, nil, start)
}

// checkDelegated refuses an execute_locally answer that is not about the
// code this package sent: its code_hash must be that code's, and code, when
// present, that very code. Anything else means the gateway analysed other
// code than ours, or the answer was changed on the way.
func checkDelegated(code string, ans wire.Answer) error {
	want := wire.CodeHash(code)
	switch {
	case ans.CodeHash != want:
		got := ans.CodeHash
		if got == "" {
			got = "none"
		}
		return pmlerr.New(pmlerr.IntegrityError,
			"the gateway's execute_locally answer is for code %s, not the code sent (%s); nothing ran", got, want).
			With("code_hash", want)
	case ans.Code != "" && ans.Code != code:
		return pmlerr.New(pmlerr.IntegrityError,
			"the gateway's execute_locally answer carries other code than the code sent (%s); nothing ran", want).
			With("code_hash", want)
	}
	return nil
}

// executeOffline runs code whose tools are all client-routed when the gateway
// cannot be reached, with the built-in analyser and the cached routing rules.
// Code that needs the gateway fails with the NETWORK_ERROR that got us here.
func (p *Workspace) executeOffline(ctx context.Context, r pendingRun, pl *plan, netErr error, start time.Time) wire.Answer {
	if pl.serverOnly() {
		return wire.ErrorAnswer(netErr, "")
	}
	p.log.Info("gateway unreachable: running locally", "err", netErr)
	r.forward, r.workflowID = false, newWorkflowID()
	return p.startLocal(ctx, r, pl, nil, start)
}

// startLocal checks the whole static plan, then runs it; a journal replays
// the calls of a run that ended while it was parked.
func (p *Workspace) startLocal(ctx context.Context, r pendingRun, pl *plan, journal *approval.Journal, start time.Time) wire.Answer {
	r.parked = nil
	if err := denied(pl.cfg.Permissions, pl.an.Tools); err != nil {
		return wire.ErrorAnswer(err, r.workflowID)
	}
	items, installed, err := p.planItems(ctx, pl)
	if err != nil {
		return wire.ErrorAnswer(err, r.workflowID)
	}
	if len(items) > 0 {
		return p.pause(r, pl, items, journal)
	}
	if installed {
		// An install changed the local tools; the plan runs with them.
		_, pl.local, _ = p.refreshConfig()
	}
	if journal == nil {
		journal = approval.NewJournal()
	}
	return p.runLocal(ctx, r, pl, journal, start)
}

// runLocal executes code in the package's sandbox, in a run of its own that
// parks when a call needs an approval.
func (p *Workspace) runLocal(ctx context.Context, r pendingRun, pl *plan, journal *approval.Journal, start time.Time) wire.Answer {
	if r.workflowID == "" {
		r.workflowID = newWorkflowID() // the run's pauses and answer share it
	}
	rules := pl.rules
	r.parked = p.startRun(ctx, func(ctx context.Context) wire.Answer {
		// The journal also keeps the run's time and randomness, so that a
		// re-run after a pause makes the same calls.
		ctx = sandbox.WithTape(withGrants(ctx, pl.grants), journal)
		return p.runner.Run(ctx, runner.Job{
			Tenant:     localTenant,
			Analysis:   pl.an,
			Code:       r.code,
			Args:       r.args,
			WorkflowID: r.workflowID,
			Options:    r.opts,
			Call:       journal.Wrap(p.bridge(pl), isHalt),
			RoutingOf:  func(tool string) string { return string(rules.Route(tool)) },
			Trace:      p.traceSink(),
			Halt:       haltAnswer(r.workflowID),
			Start:      start,
		}).Answer
	})
	return p.awaitRun(ctx, r, pl, journal)
}

// awaitRun waits for the live run of r: a pause is answered
// approval_required, and the run waits, parked, for its continue_workflow.
func (p *Workspace) awaitRun(ctx context.Context, r pendingRun, pl *plan, journal *approval.Journal) wire.Answer {
	ev := r.parked.await(ctx)
	if ev.pause != nil {
		return p.pause(r, pl, ev.pause, journal)
	}
	if pl.grants.revealsEnv() {
		revealEnv(ctx)
	}
	if ev.answer.Status == wire.StatusSuccess && ev.answer.Capability == nil && r.opts.Learns() {
		ev.answer.Capability = p.learn(r.code, r.intent, pl.an, ev.answer.Result)
	}
	return ev.answer
}

// bridge is the mcp bridge of a local run and of the capabilities nested in
// it: the asking layer, the permission gate, then the router.
func (p *Workspace) bridge(pl *plan) tools.CallFunc {
	return asking(p.gate(pl, p.router(pl)))
}

// localTenant is the one tenant whose code the package runs.
const localTenant = ""

// router is the sandbox's mcp bridge in the package: client tools to local
// tools, server tools to the gateway's call.
func (p *Workspace) router(pl *plan) tools.CallFunc {
	return func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		if out, ok, err := p.callCapability(ctx, pl, tool, args); ok {
			return out, err
		}
		if pl.rules.Route(tool) == routing.Server {
			ns, _ := tools.Split(tool)
			env, err := p.byokEnv(ctx, ns)
			if err != nil {
				return nil, err
			}
			return p.gw.Call(ctx, wire.CallRequest{Tool: tool, Args: args, Env: env})
		}
		return pl.local.Call(ctx, tool, args)
	}
}
