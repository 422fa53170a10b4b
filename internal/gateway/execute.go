package gateway

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/pml-go/pml/internal/analysis"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/routing"
	"github.com/pml-go/pml/internal/runner"
	"github.com/pml-go/pml/internal/tools"
	"github.com/pml-go/pml/internal/wire"
)

// InstallCommand is what CLIENT_TOOLS_REQUIRE_PACKAGE tells a user to run.
const InstallCommand = "go install github.com/pml-go/pml/cmd/pml@latest && pml init"

// Execute is the execute tool: analyse, decide where the code runs, and run
// it here when every tool is server-routed (docs/architecture.md).
func (s *Service) Execute(ctx context.Context, c Caller, req wire.ExecuteRequest) wire.Answer {
	start := time.Now()
	if cw := req.ContinueWorkflow; cw != nil {
		// A package continues the approvals it asked for itself; the gateway
		// holds only those it asked a package-less client for.
		return s.continueForeign(ctx, c, cw, start)
	}
	return s.run(ctx, c, req, newID(), start)
}

// run analyses, plans and runs req (Execute).
func (s *Service) run(ctx context.Context, c Caller, req wire.ExecuteRequest, workflowID string, start time.Time) wire.Answer {
	an, err := s.analyzer.Analyze(req.Code)
	if err != nil {
		return s.fail(start, "server", wire.ErrorAnswer(err, workflowID))
	}
	if req.Options != nil {
		c.Pins = req.Options.Pins
	}
	plan := s.Plan(ctx, c, an)
	if plan.Side == routing.Client {
		if !c.IsPackage && len(plan.ClientTools) == 0 && len(plan.KeyServers) > 0 {
			return s.fail(start, "server", wire.ErrorAnswer(pmlerr.New(pmlerr.APIKeyRequired,
				"this code uses %v, which need your own API keys; run it through the PML package, which sends them from your .env with each call. Install: %s",
				plan.KeyServers, InstallCommand).With("servers", plan.KeyServers).With("install_command", InstallCommand), workflowID))
		}
		if !c.IsPackage {
			return s.fail(start, "server", wire.ErrorAnswer(packageOnlyError(an, plan.ClientTools), workflowID))
		}
		s.metrics.Executions.WithLabelValues("delegated", string(wire.StatusExecuteLocally)).Inc()
		return wire.Answer{
			Status:      wire.StatusExecuteLocally,
			Code:        req.Code,
			CodeHash:    wire.CodeHash(req.Code),
			WorkflowID:  workflowID,
			DAG:         an.WireDAG(),
			ToolsUsed:   wire.ToolRefs(plan.Refs),
			ClientTools: plan.ClientTools,
		}
	}
	if err := s.checkServerTools(ctx, c, an.Tools); err != nil {
		return s.fail(start, "server", wire.ErrorAnswer(err, workflowID))
	}
	if ans, ok := s.approveForeign(ctx, &c, req, an.Tools, workflowID); !ok {
		return ans
	}
	out := s.runner.Run(ctx, runner.Job{
		Tenant:     c.tenant(),
		Analysis:   an,
		Code:       req.Code,
		Args:       req.Args,
		WorkflowID: workflowID,
		TraceID:    requestedTraceID(ctx),
		Options:    req.Options,
		Call:       s.bridge(c),
		RoutingOf:  func(string) string { return string(routing.Server) },
		Trace:      s.traceSink(ctx, c),
		Start:      start,
	})
	if out.Answer.Status != wire.StatusSuccess {
		return s.fail(start, "server", out.Answer)
	}
	s.metrics.observe("server", wire.StatusSuccess, "", time.Since(start), out.MemoryBytes)
	out.Answer.Capability = s.learn(ctx, c, req, an, plan, out.Answer.Result)
	return out.Answer
}

func (s *Service) fail(start time.Time, side string, a wire.Answer) wire.Answer {
	s.metrics.observe(side, wire.StatusError, a.ErrorCode, time.Since(start), 0)
	return a
}

// Plan is the routing decision for analysed code.
type Plan struct {
	Side        routing.Side
	Refs        []wire.ToolRef
	ClientTools []string
	// KeyServers are BYOK servers the code calls: it must run in the package,
	// which holds the keys.
	KeyServers []string
}

// Plan resolves where each tool of an runs. A dynamic mcp[x] access routes
// the whole code to the client: we cannot prove it server-safe.
func (s *Service) Plan(ctx context.Context, c Caller, an *analysis.Analysis) Plan {
	p := Plan{Side: routing.Server, Refs: []wire.ToolRef{}}
	for _, id := range an.Tools {
		side, fqdn := s.routeTool(ctx, c, id)
		p.Refs = append(p.Refs, wire.ToolRef{ID: id, FQDN: fqdn, Routing: string(side)})
		if side == routing.Client {
			p.ClientTools = append(p.ClientTools, id)
			p.Side = routing.Client
		}
		if b, ok := s.byokFor(id); ok && !c.servesLocally(b.cfg.Name) && !slices.Contains(p.KeyServers, b.cfg.Name) {
			p.KeyServers = append(p.KeyServers, b.cfg.Name)
			p.Side = routing.Client
		}
	}
	if an.Dynamic {
		p.Side = routing.Client
	}
	if p.ClientTools == nil {
		p.ClientTools = []string{}
	}
	return p
}

// checkServerTools refuses code that calls a server tool that does not exist,
// before anything runs.
func (s *Service) checkServerTools(ctx context.Context, c Caller, ids []string) error {
	var known []string
	for _, id := range ids {
		if _, byok := s.byokFor(id); byok || s.isCapability(ctx, c, id) {
			continue
		}
		ns, action := tools.Split(id)
		if p, ok := s.tools.Provider(ns); ok {
			if known, ok := p.(toolChecker); ok {
				if known.HasTool(id) {
					continue
				}
			} else {
				list, err := p.Tools(ctx)
				if err != nil {
					return pmlerr.Wrap(pmlerr.ToolError, err)
				}
				if hasTool(list, id) {
					continue
				}
			}
		}
		if known == nil {
			all, _ := s.tools.Tools(ctx)
			for _, t := range all {
				known = append(known, t.ID)
			}
		}
		near := tools.Nearest(id, known, 3)
		return pmlerr.New(pmlerr.UnknownTool, "unknown tool %q (mcp.%s.%s)%s", id, ns, action, didYouMean(near)).
			With("tool", id).With("suggestions", wire.NonNil(near))
	}
	return nil
}

// toolChecker is a provider that tells whether it serves a tool without
// listing its tools (tools.Table: the gateway's built-ins, checked for every
// execution that names them).
type toolChecker interface {
	HasTool(id string) bool
}

func hasTool(list []tools.Info, id string) bool {
	for _, t := range list {
		if t.ID == id {
			return true
		}
	}
	return false
}

func didYouMean(near []string) string {
	if len(near) == 0 {
		return ""
	}
	b, _ := json.Marshal(near)
	return "; nearest: " + string(b)
}
