package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/pml-go/pml/internal/analysis"
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
		an, err := s.analyzer.Analyze(string(e.Body))
		if err != nil {
			return nil, pmlerr.New(pmlerr.ToolError, "capability %s: stored code no longer analyses: %v", tool, err)
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
func (s *Service) learn(ctx context.Context, c Caller, req wire.ExecuteRequest, an *analysis.Analysis, plan Plan) *wire.CapabilityRef {
	if !req.Options.Learns() {
		return nil
	}
	k := learnKey{scope: c.Scope, codeHash: an.CodeHash, intent: req.Intent}
	now := time.Now()
	if ref, ok := s.learned.Get(k, now); ok {
		return ref
	}
	ref, err := s.saveCapability(ctx, c, req.Code, req.Intent, an, plan.Side)
	if err != nil {
		s.log.Warn("saving capability", "err", err)
		return nil
	}
	s.learned.Put(k, ref, now)
	return ref
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
// package's account of its tools.
func (s *Service) LearnLocal(ctx context.Context, c Caller, code, intent string) (*wire.CapabilityRef, error) {
	an, err := s.analyzer.Analyze(code)
	if err != nil {
		return nil, err
	}
	return s.saveCapability(ctx, c, code, intent, an, s.Plan(ctx, c, an).Side)
}

// saveCapability applies the learning policy (docs/how-it-works.md "Learned capabilities"): code that calls no tool, or is one direct call of a tool,
// is not learned; code of the same shape (analysis.Shape: the same tokens
// but for whitespace, comments and literal values) in the same project is
// one capability, however often it runs and whatever its intent. Code or an
// intent holding a literal secret is not saved: a capability is served as
// it is, and may be shared.
func (s *Service) saveCapability(ctx context.Context, c Caller, code, intent string, an *analysis.Analysis, side routing.Side) (*wire.CapabilityRef, error) {
	if s.store == nil || c.Scope.Org == "" {
		return nil, nil
	}
	shape := analysis.ShapeOf(code)
	switch {
	case len(an.Tools) == 0:
		return nil, nil
	case shape.DirectCall:
		return nil, nil
	case holdsSecret(code, intent):
		s.log.Info("run not learned: its code or intent holds a secret", "org", c.Scope.Org, "project", c.Scope.Project, "code_hash", an.CodeHash)
		return nil, nil
	}
	action, err := s.learnedAction(ctx, c, intent, shape.Hash, an.Tools)
	if err != nil {
		return nil, err
	}
	saved, err := s.registry.Save(ctx, store.Capability{
		Scope:       c.Scope,
		Namespace:   registry.DefaultNamespace,
		Action:      action,
		Description: intent,
		Code:        code,
		CodeHash:    shape.Hash,
		ToolsUsed:   wire.NonNil(an.Tools),
		Routing:     string(side),
		ArgsSchema:  an.ArgsSchema,
	})
	if err != nil {
		return nil, pmlerr.Wrap(pmlerr.Internal, fmt.Errorf("saving capability: %w", err))
	}
	return capabilityRef(saved)
}

// learnedAction names new code from its intent (registry.DefaultAction).
// When the project already has that name for code using other tools, the
// new code is something else that happens to read alike: it gets the name
// and the first four hex digits of its shape instead of replacing the
// other's current version. Code using the same tools under the same name is
// a new version of it.
func (s *Service) learnedAction(ctx context.Context, c Caller, intent, shapeHash string, used []string) (string, error) {
	action := registry.DefaultAction(intent, shapeHash)
	if intent == "" {
		return action, nil
	}
	prev, err := s.store.CapabilityByName(ctx, c.Scope, registry.DefaultNamespace, action)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return action, nil
	case err != nil:
		return "", pmlerr.Wrap(pmlerr.Internal, fmt.Errorf("naming capability: %w", err))
	case prev.Scope != c.Scope || prev.CodeHash == shapeHash || slices.Equal(prev.ToolsUsed, used):
		return action, nil
	}
	return action + "_" + shapeHash[:4], nil
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
		desc := cp.Description
		if desc == "" {
			desc = fmt.Sprintf("Learned capability using %v.", cp.ToolsUsed)
		}
		if r == 2 {
			desc = fmt.Sprintf("[public capability of %s: its code, not yours] %s", registry.Owner(cp.Scope), desc)
		}
		uses := cp.Uses
		out[id] = wire.DiscoveredTool{ID: id, Kind: "capability", Description: desc, Routing: cp.Routing,
			FQDN: e.FQDN(), Owner: registry.Owner(cp.Scope), InputSchema: cp.ArgsSchema,
			Uses: &uses, Undescribed: cp.Description == ""}
	}
	return out
}
