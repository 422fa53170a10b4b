package pkgclient

import (
	"context"
	"encoding/json"
	"time"

	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/routing"
	"github.com/pml-go/pml/internal/sandbox"
	"github.com/pml-go/pml/internal/tools"
	"github.com/pml-go/pml/internal/tracing"
	"github.com/pml-go/pml/internal/wire"
)

// Execute is the package's execute tool (ADR-059): forward to the gateway;
// on execute_locally run the code here with per-call hybrid routing; when the
// gateway is unreachable, analyse locally and run what can run offline.
func (p *Package) Execute(ctx context.Context, req wire.ExecuteRequest) wire.Answer {
	start := time.Now()
	if _, _, err := p.refreshConfig(); err != nil {
		return wire.ErrorAnswer(err, "")
	}
	if cw := req.ContinueWorkflow; cw != nil {
		return wire.ErrorAnswer(pmlerr.New(pmlerr.WorkflowNotFound, "workflow %q is not pending (unknown or expired)", cw.WorkflowID), cw.WorkflowID)
	}
	ans, err := p.gw.Execute(ctx, req)
	switch {
	case err != nil && isNetworkError(err):
		return p.executeOffline(ctx, req, err, start)
	case err != nil:
		return wire.ErrorAnswer(err, "")
	case ans.Status != wire.StatusExecuteLocally:
		return ans
	}
	code := ans.Code
	if code == "" {
		code = req.Code
	}
	return p.runLocal(ctx, code, ans.WorkflowID, req.Options, start)
}

// executeOffline runs code whose tools are all client-routed when the gateway
// cannot be reached, with the built-in analyser and the cached routing rules.
// Code that needs the gateway fails with the NETWORK_ERROR that got us here.
func (p *Package) executeOffline(ctx context.Context, req wire.ExecuteRequest, netErr error, start time.Time) wire.Answer {
	an, err := p.analyzer.Analyze(req.Code)
	if err != nil {
		return wire.ErrorAnswer(err, "")
	}
	rules := p.routingRules(ctx)
	if rules.Resolve(an.Tools) == routing.Server && !an.Dynamic {
		return wire.ErrorAnswer(netErr, "")
	}
	p.log.Info("gateway unreachable: running locally", "err", netErr)
	return p.runLocal(ctx, req.Code, newWorkflowID(), req.Options, start)
}

// runLocal executes code in the package's sandbox.
func (p *Package) runLocal(ctx context.Context, code, workflowID string, opts *wire.ExecuteOptions, start time.Time) wire.Answer {
	an, err := p.analyzer.Analyze(code)
	if err != nil {
		return wire.ErrorAnswer(err, workflowID)
	}
	_, local, _ := p.refreshConfig()
	rules := p.routingRules(ctx)
	rec := p.newRecorder(an, rules)
	res, err := sandbox.Run(ctx, an.JS, nil, rec.Wrap(p.router(rules, local)), p.limitsFor(opts))
	traceID := p.finishTrace(rec, tracing.Trace{WorkflowID: workflowID, Code: code, ToolsUsed: an.Tools, Logs: res.Logs}, an, err)
	if err != nil {
		a := wire.ErrorAnswer(an.MapError(err), workflowID)
		a.TraceID = traceID
		return a
	}
	return wire.Answer{
		Status:          wire.StatusSuccess,
		Result:          res.Value,
		ExecutedLocally: wire.Bool(true),
		WorkflowID:      workflowID,
		TraceID:         traceID,
		ToolsUsed:       nonNil(an.Tools),
		DurationMS:      wire.Float(float64(time.Since(start).Microseconds()) / 1000),
		Logs:            res.Logs,
	}
}

// router is the sandbox's mcp bridge in the package: client tools to local
// tools, server tools to the gateway's call.
func (p *Package) router(rules routing.Rules, local *tools.Mux) tools.CallFunc {
	return func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		if out, ok, err := p.callCapability(ctx, tool, args); ok {
			return out, err
		}
		if rules.Route(tool) == routing.Server {
			return p.gw.Call(ctx, wire.CallRequest{Tool: tool, Args: args})
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
