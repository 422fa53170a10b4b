package pkgclient

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/pml-go/pml/internal/approval"
	"github.com/pml-go/pml/internal/routing"
	"github.com/pml-go/pml/internal/sandbox"
	"github.com/pml-go/pml/internal/tools"
	"github.com/pml-go/pml/internal/tracing"
	"github.com/pml-go/pml/internal/wire"
)

// Execute is the package's execute tool (ADR-059). The code is analysed
// here first (the analyser is built in): a denied tool stops it before
// anything runs, and a server-only plan that needs approval asks before the
// gateway runs it. Then it is forwarded; on execute_locally every tool of the
// plan is checked (permissions, dependencies, keys, integrity) and the code
// runs in the local sandbox with per-call hybrid routing. When the gateway is
// unreachable, code whose tools are all client-routed still runs here.
func (p *Package) Execute(ctx context.Context, req wire.ExecuteRequest) wire.Answer {
	start := time.Now()
	cfg, _, err := p.refreshConfig()
	if err != nil {
		return wire.ErrorAnswer(err, "")
	}
	if req.ContinueWorkflow != nil {
		return p.continueWorkflow(ctx, req, start)
	}
	an, err := p.analyzer.Analyze(req.Code)
	if err != nil {
		return wire.ErrorAnswer(err, "")
	}
	if err := denied(cfg.Permissions, an.Tools); err != nil {
		return wire.ErrorAnswer(err, "")
	}
	if p.routingRules(ctx).Resolve(an.Tools) == routing.Server && !an.Dynamic {
		if items := p.askItems(cfg.Permissions, an.Tools); len(items) > 0 {
			return p.pause(pendingRun{code: req.Code, intent: req.Intent, opts: req.Options, tools: an.Tools, forward: true}, items, nil)
		}
	}
	return p.forward(ctx, req, start)
}

// forward sends the code to the gateway and runs it here on execute_locally.
func (p *Package) forward(ctx context.Context, req wire.ExecuteRequest, start time.Time) wire.Answer {
	ans, err := p.gw.Execute(ctx, req)
	switch {
	case err != nil && isNetworkError(err):
		return p.executeOffline(ctx, req, err, start)
	case err != nil:
		return wire.ErrorAnswer(err, "")
	case ans.Status != wire.StatusExecuteLocally:
		return ans
	}
	r := pendingRun{code: ans.Code, intent: req.Intent, opts: req.Options, workflowID: ans.WorkflowID, tools: toolIDs(ans.ToolsUsed)}
	if r.code == "" {
		r.code = req.Code
	}
	return p.startLocal(ctx, r, nil, start)
}

// toolIDs reads execute_locally's tools_used ([{id, fqdn, routing}]).
func toolIDs(v any) []string {
	var refs []wire.ToolRef
	b, _ := json.Marshal(v)
	_ = json.Unmarshal(b, &refs)
	ids := make([]string, 0, len(refs))
	for _, r := range refs {
		ids = append(ids, r.ID)
	}
	return ids
}

// executeOffline runs code whose tools are all client-routed when the gateway
// cannot be reached, with the built-in analyser and the cached routing rules.
// Code that needs the gateway fails with the NETWORK_ERROR that got us here.
func (p *Package) executeOffline(ctx context.Context, req wire.ExecuteRequest, netErr error, start time.Time) wire.Answer {
	an, err := p.analyzer.Analyze(req.Code)
	if err != nil {
		return wire.ErrorAnswer(err, "")
	}
	if p.routingRules(ctx).Resolve(an.Tools) == routing.Server && !an.Dynamic {
		return wire.ErrorAnswer(netErr, "")
	}
	p.log.Info("gateway unreachable: running locally", "err", netErr)
	return p.startLocal(ctx, pendingRun{code: req.Code, intent: req.Intent, opts: req.Options, workflowID: newWorkflowID(), tools: an.Tools, offline: true}, nil, start)
}

// startLocal checks the whole static plan, then runs it; a journal replays
// the calls that completed before a pause.
func (p *Package) startLocal(ctx context.Context, r pendingRun, journal *approval.Journal, start time.Time) wire.Answer {
	cfg, _, err := p.refreshConfig()
	if err != nil {
		return wire.ErrorAnswer(err, r.workflowID)
	}
	rules := p.routingRules(ctx)
	if err := denied(cfg.Permissions, r.tools); err != nil {
		return wire.ErrorAnswer(err, r.workflowID)
	}
	items, err := p.planItems(ctx, cfg, rules, r.tools)
	if err != nil {
		return wire.ErrorAnswer(err, r.workflowID)
	}
	if len(items) > 0 {
		return p.pause(r, items, journal)
	}
	if journal == nil {
		journal = approval.NewJournal()
	}
	return p.runLocal(ctx, r, cfg, rules, journal, start)
}

// runLocal executes code in the package's sandbox.
func (p *Package) runLocal(ctx context.Context, r pendingRun, cfg Config, rules routing.Rules, journal *approval.Journal, start time.Time) wire.Answer {
	an, err := p.analyzer.Analyze(r.code)
	if err != nil {
		return wire.ErrorAnswer(err, r.workflowID)
	}
	_, local, _ := p.refreshConfig()
	runCtx, vm, err := p.admission.Enter(ctx, localTenant)
	if err != nil {
		return wire.ErrorAnswer(err, r.workflowID)
	}
	rec := p.newRecorder(an, rules)
	call := vm.Wrap(rec.Wrap(journal.Wrap(p.gate(cfg.Permissions, p.router(rules, local)), isHalt)))
	res, err := func() (sandbox.Result, error) {
		defer vm.Exit()
		return sandbox.Run(runCtx, an.JS, nil, call, p.limitsFor(r.opts))
	}()
	var na needApproval
	if errors.As(err, &na) {
		return p.pause(r, []approval.Item{na.item}, journal)
	}
	traceID := p.finishTrace(rec, tracing.Trace{WorkflowID: r.workflowID, Code: r.code, ToolsUsed: an.Tools, Logs: res.Logs}, an, err)
	if err != nil {
		a := wire.ErrorAnswer(an.MapError(err), r.workflowID)
		a.TraceID = traceID
		return a
	}
	ans := wire.Answer{
		Status:          wire.StatusSuccess,
		Result:          res.Value,
		ExecutedLocally: wire.Bool(true),
		WorkflowID:      r.workflowID,
		TraceID:         traceID,
		ToolsUsed:       nonNil(an.Tools),
		DurationMS:      wire.Float(float64(time.Since(start).Microseconds()) / 1000),
		Logs:            res.Logs,
	}
	p.learnLater(r.code, r.intent, an)
	return ans
}

// localTenant is the one tenant whose code the package runs.
const localTenant = ""

// router is the sandbox's mcp bridge in the package: client tools to local
// tools, server tools to the gateway's call.
func (p *Package) router(rules routing.Rules, local *tools.Mux) tools.CallFunc {
	return func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		if out, ok, err := p.callCapability(ctx, tool, args); ok {
			return out, err
		}
		if rules.Route(tool) == routing.Server {
			ns, _ := tools.Split(tool)
			return p.gw.Call(ctx, wire.CallRequest{Tool: tool, Args: args, Env: p.byokEnv(ctx, ns)})
		}
		return local.Call(ctx, tool, args)
	}
}

func (p *Package) limitsFor(o *wire.ExecuteOptions) sandbox.Limits {
	if o == nil {
		return p.limits
	}
	return p.limits.WithTimeoutMS(o.TimeoutMS)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
