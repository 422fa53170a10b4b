package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/pml-go/pml/internal/analysis"
	"github.com/pml-go/pml/internal/learning"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/registry"
	"github.com/pml-go/pml/internal/routing"
	"github.com/pml-go/pml/internal/runner"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/tools"
	"github.com/pml-go/pml/internal/wire"
)

// bridge is the sandbox's mcp bridge on the gateway: every call is a server
// tool (the plan proved it) or a server-routed capability, which runs nested
// with this same bridge.
func (s *Service) bridge(c Caller) tools.CallFunc {
	var call tools.CallFunc
	call = func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		e, ok, err := s.capability(ctx, c, tool)
		switch {
		case err != nil:
			return nil, err
		case !ok:
			return s.tools.Call(ctx, tool, args)
		case e.Routing == routing.Client:
			return nil, pmlerr.New(pmlerr.PermissionDenied,
				"capability %s uses tools that run on the user's machine: call it from code run through the PML package", tool).With("tool", tool)
		}
		if pin, pinned := c.Pins[tool]; pinned && pin != e.FQDN() {
			// It changed after the package checked it: what was approved is
			// what runs, or nothing.
			return nil, pmlerr.New(pmlerr.IntegrityError, "capability %s changed after it was approved: approved %s, now %s; run again to review the new version",
				tool, pin, e.FQDN()).With("tool", tool).With("approved", pin).With("current", e.FQDN())
		}
		an, err := s.analyzer.Analyze(string(e.Body))
		if err != nil {
			return nil, pmlerr.New(pmlerr.ToolError, "capability %s: stored code no longer analyses: %v", tool, err)
		}
		if args, err = learning.CallArgs(s.validate, tool, *e.Capability, args); err != nil {
			return nil, err
		}
		s.countUse(ctx, e)
		return s.runner.RunNested(ctx, runner.Nested{Tenant: c.tenant(), Tool: tool, FQDN: e.FQDN(), Analysis: an,
			Args: args, Call: call, Trace: s.traceSink(ctx, c)})
	}
	return call
}

// countUse counts one call of the capability e, from code or the call tool
// alike. A failed count is logged, never the call's failure.
func (s *Service) countUse(ctx context.Context, e registry.Entry) {
	if e.Capability == nil || s.store == nil {
		return
	}
	if err := s.store.CountCapabilityUse(ctx, e.Capability.ID); err != nil {
		s.log.Warn("counting a capability call", "capability", e.Capability.ID, "err", err)
	}
}

// capability resolves a tool id to the capability the caller would call.
// Tool namespaces, the gateway's or the caller's package's, never name one,
// without a store round trip.
func (s *Service) capability(ctx context.Context, c Caller, id string) (registry.Entry, bool, error) {
	if ns, _ := tools.Split(id); s.registry.Reserved(ns) || c.servesLocally(ns) {
		return registry.Entry{}, false, nil
	}
	if _, ok := s.byokFor(id); ok {
		return registry.Entry{}, false, nil
	}
	e, ok, err := s.registry.Resolve(ctx, c.Scope, id)
	if err != nil {
		return registry.Entry{}, false, pmlerr.New(pmlerr.Internal, "looking up capability %s: %v", id, err)
	}
	return e, ok, nil
}

// routeTool says where one tool of a plan runs and its FQDN when known: a
// capability runs where its own tools do (client as soon as one does), a
// built-in or a configured server's tool where the rules say.
//
// A namespace the caller's package serves is the client's whatever the
// rules, the configured servers or the store say: the package answers those
// calls with its own tools.
func (s *Service) routeTool(ctx context.Context, c Caller, id string) (routing.Side, string) {
	ns, _ := tools.Split(id)
	local := c.servesLocally(ns)
	if e, ok := s.registry.Builtin(id); ok && (!local || e.Routing == routing.Client) {
		if local {
			return routing.Client, e.FQDN()
		}
		return s.rules.Route(id), e.FQDN()
	}
	if local {
		return routing.Client, ""
	}
	if e, ok := s.registry.Server(ns); ok {
		return s.rules.Route(id), e.FQDN()
	}
	e, ok, err := s.capability(ctx, c, id)
	if err != nil {
		// Without the store we cannot prove the capability server-safe.
		s.log.Warn("routing: capability lookup failed", "tool", id, "err", err)
		return routing.Client, ""
	}
	switch {
	case ok:
		return e.Routing, e.FQDN()
	case ns == registry.DefaultNamespace || registry.IsQualified(id):
		// The capabilities' names are the gateway's: an unknown one is an
		// unknown tool here, not a tool of the user's machine.
		return routing.Server, ""
	}
	return s.rules.Route(id), ""
}

// isCapability reports whether id names a capability the caller can call.
func (s *Service) isCapability(ctx context.Context, c Caller, id string) bool {
	_, ok, _ := s.capability(ctx, c, id)
	return ok
}

// learn saves a successful run as a capability. Failing to save is logged,
// never the run's failure.
//
// A capability is deduplicated by its code's shape, so the same code run again
// within learnCacheTTL reuses the reference instead of writing to the store
// on every run (its usage count then grows once per TTL, not once per run).
func (s *Service) learn(ctx context.Context, c Caller, req wire.ExecuteRequest, an *analysis.Analysis, plan Plan, result json.RawMessage) *wire.CapabilityRef {
	if !req.Options.Learns() {
		return nil
	}
	k := learnKey{scope: c.Scope, codeHash: an.CodeHash, intent: req.Intent}
	now := time.Now()
	ref, ok := s.learned.Get(k, now)
	if !ok {
		var err error
		ref, err = s.saveCapability(ctx, c, learning.Run{Code: req.Code, Intent: req.Intent, Analysis: an, Routing: string(plan.Side), Result: result})
		if err != nil {
			s.log.Warn("saving capability", "err", err)
		}
		s.learned.Put(k, ref, now)
	}
	s.learnWords(c, req.Intent, an.Tools, ref)
	return ref
}

// learnWords teaches discover the words of a successful run's intent for
// the tools it used (the capability it was kept as has them already).
func (s *Service) learnWords(c Caller, intent string, used []string, _ *wire.CapabilityRef) {
	s.learner.LearnWords(c.Scope, c.Who, intent, used)
}

type learnKey struct {
	scope            store.Scope
	codeHash, intent string
}

const (
	learnCacheTTL  = 10 * time.Second
	learnCacheSize = 10_000
)

// LearnLocal saves code the package ran successfully on the user's machine.
// The gateway analyses and routes it itself rather than trusting the
// package's account of its tools; of its result it takes only the schema
// the package reported (bounded), which types the capability's own result.
func (s *Service) LearnLocal(ctx context.Context, c Caller, req wire.LearnRequest) (*wire.CapabilityRef, error) {
	an, err := s.analyzer.Analyze(req.Code)
	if err != nil {
		return nil, err
	}
	if unknown, err := s.unknownTools(ctx, c, an.Tools); err != nil {
		return nil, pmlerr.Wrap(pmlerr.Internal, err)
	} else if len(unknown) > 0 {
		// It cannot have run as reported: not learned.
		return nil, pmlerr.New(pmlerr.UnknownTool, "capability report: %s %s no tool of this project; not learned",
			strings.Join(unknown, ", "), isAre(len(unknown))).With("tools", unknown)
	}
	ref, err := s.saveCapability(ctx, c, learning.Run{Code: req.Code, Intent: req.Intent, Analysis: an,
		Routing: string(s.Plan(ctx, c, an).Side), OutputSchema: req.OutputSchema, Reported: true})
	if err == nil {
		s.learnWords(c, req.Intent, an.Tools, ref)
	}
	return ref, err
}

// unknownTools are the tools of used that exist nowhere for c: not a tool
// of the gateway (its built-ins, the package's built-in client tools, its
// servers'), not a client tool c's packages reported, not in a
// namespace c's package serves, and no capability c can call.
func (s *Service) unknownTools(ctx context.Context, c Caller, used []string) ([]string, error) {
	all, err := s.tools.Tools(ctx)
	if err != nil {
		return nil, err
	}
	known := make(map[string]bool, len(all))
	for _, t := range all {
		known[t.ID] = true
	}
	if s.store != nil {
		reported, err := s.store.ClientTools(ctx, c.Scope)
		if err != nil {
			return nil, err
		}
		for _, t := range reported {
			known[t.ID] = true
		}
	}
	var unknown []string
	for _, id := range used {
		ns, _ := tools.Split(id)
		if _, builtin := s.registry.Builtin(id); builtin || known[id] || c.servesLocally(ns) {
			continue
		}
		if _, ok, err := s.registry.Resolve(ctx, c.Scope, id); err != nil {
			return nil, err
		} else if !ok {
			unknown = append(unknown, id)
		}
	}
	return unknown, nil
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

// saveCapability applies the learning policy (internal/learning,
// docs/how-it-works.md "Learned capabilities") to a successful run of c.
func (s *Service) saveCapability(ctx context.Context, c Caller, run learning.Run) (*wire.CapabilityRef, error) {
	run.Scope = c.Scope
	saved, ok, err := s.learner.Learn(ctx, run)
	if err != nil {
		return nil, pmlerr.Wrap(pmlerr.Internal, err)
	}
	if !ok {
		return nil, nil
	}
	return capabilityRef(saved)
}

func capabilityRef(c store.Capability) (*wire.CapabilityRef, error) {
	e, err := registry.CapabilityEntry(c)
	if err != nil {
		return nil, err
	}
	return &wire.CapabilityRef{ID: c.ID, FQDN: e.FQDN(), Name: c.Namespace + ":" + c.Action}, nil
}

// discoverCapabilities are the capabilities the caller can call, as
// discover hits by the id code calls them with: its own project's and its
// org's by bare name (its own project's first), other orgs' public ones by
// their qualified name (registry.IsQualified). Every hit names its owner.
// Names the caller's package serves are left out: its calls never reach them.
func (s *Service) discoverCapabilities(ctx context.Context, c Caller) map[string]wire.DiscoveredTool {
	entries, err := s.registry.Capabilities(ctx, c.Scope, "")
	if err != nil {
		s.log.Warn("discover: capabilities unavailable", "err", err)
		return nil
	}
	out := map[string]wire.DiscoveredTool{}
	rank := map[string]int{}
	for _, e := range entries {
		cp := e.Capability
		id := cp.Namespace + ":" + cp.Action
		r := 0
		switch {
		case cp.Scope.Org != c.Scope.Org:
			id, r = registry.QualifiedID(*cp), 2
		case cp.Scope != c.Scope:
			r = 1
		}
		if r < 2 && c.servesLocally(cp.Namespace) {
			continue
		}
		if prev, seen := rank[id]; seen && prev <= r {
			continue
		}
		rank[id] = r
		desc := learning.Describe(*cp)
		if r == 2 {
			desc = fmt.Sprintf("[public capability of %s: its code, not yours] %s", registry.Owner(cp.Scope), desc)
		}
		uses := cp.TimesRun()
		out[id] = wire.DiscoveredTool{ID: id, Kind: "capability", Description: desc, Routing: cp.Routing,
			FQDN: e.FQDN(), Owner: registry.Owner(cp.Scope), InputSchema: registry.RequireLifted(cp.ArgsSchema), OutputSchema: cp.OutputSchema,
			Uses: &uses, Undescribed: cp.Description == "" && cp.TimesRun() <= 1, Repeated: cp.Habit(),
			ToolsUsed: cp.ToolsUsed, SuccessRate: learning.SuccessRate(*cp)}
	}
	return out
}
