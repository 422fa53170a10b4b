package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/pml-go/pml/internal/analysis"
	"github.com/pml-go/pml/internal/gatewayclient"
	"github.com/pml-go/pml/internal/learning"
	"github.com/pml-go/pml/internal/outputtype"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/registry"
	regclient "github.com/pml-go/pml/internal/registry/client"
	"github.com/pml-go/pml/internal/routing"
	"github.com/pml-go/pml/internal/runner"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/tools"
	"github.com/pml-go/pml/internal/tracing"
	"github.com/pml-go/pml/internal/wire"
)

// callCapability runs tool when it names a learned capability; ok is false
// when it does not. A tool served here or routed to the gateway is never
// one (the gateway's call runs server capabilities itself). A capability that
// touches this machine is fetched from the registry (a 304 when unchanged),
// checked against the lockfile — a changed one asks for an integrity
// approval — and run nested in its own VM, its calls going through the same
// bridge as any call of the code.
func (p *Workspace) callCapability(ctx context.Context, pl *plan, tool string, args json.RawMessage) (out json.RawMessage, ok bool, err error) {
	ns, _ := tools.Split(tool)
	if _, served := pl.local.Provider(ns); served || pl.rules.Route(tool) == routing.Server {
		return nil, false, nil
	}
	reg := p.gw.Registry()
	item, found, err := reg.Resolve(ctx, tool)
	switch {
	case err != nil && (ns == registry.DefaultNamespace || registry.IsQualified(tool) || pmlerr.CodeOf(err, "") == pmlerr.Unauthorized):
		return nil, true, err // meant a capability, or a refused key: say why it cannot run
	case err != nil || !found:
		return nil, false, nil
	case item.Routing == routing.Server:
		// Another org's: the versions the lockfile holds, of it and of every
		// qualified capability it calls, or a question.
		pins, changed, err := p.pinQualified(ctx, []string{tool})
		switch {
		case err != nil:
			return nil, true, err
		case len(changed) > 0:
			return nil, true, needApproval{item: changed[0]}
		}
		req := wire.CallRequest{Tool: tool, Args: args, Pin: pins[tool], Pins: pins}
		out, err := p.gw.Call(ctx, req)
		return out, true, err
	}
	e, err := reg.Fetch(ctx, item.FQDN)
	if err != nil {
		return nil, true, err
	}
	lf, err := p.lockfile()
	if err != nil {
		return nil, true, err
	}
	var mm *regclient.MismatchError
	if err := regclient.Check(lf, e); errors.As(err, &mm) {
		return nil, true, needApproval{item: mm.Item()}
	} else if err != nil {
		return nil, true, err
	}
	an, err := p.analyzer.Analyze(string(e.Body))
	if err != nil {
		return nil, true, pmlerr.New(pmlerr.ToolError, "capability %s: its code does not analyse: %v", tool, err)
	}
	view := store.Capability{Description: item.Description, ArgsSchema: item.InputSchema, OutputSchema: item.OutputSchema}
	if args, err = learning.CallArgs(p.validate, tool, view, args); err != nil {
		return nil, true, err
	}
	out, err = p.runner.RunNested(ctx, runner.Nested{Tenant: localTenant, Tool: tool, FQDN: item.FQDN, Analysis: an,
		Args: args, Call: p.bridge(pl), Trace: p.traceSink()})
	return out, true, err
}

// learnTimeout bounds reporting a local run.
const learnTimeout = gatewayclient.ConnectTimeout

// learn reports a successful local run for learning and answers what was
// kept of it: the capability it became or was counted in (execute's
// capability field, docs/protocol.md), or nil. The report runs in the
// background and the answer waits for it at most learnWait, so a slow
// gateway never holds an answer up for long; Close waits for the reports
// still under way (each bounded by learnTimeout). The gateway deduplicates
// by code hash, so each distinct code is reported once per session and its
// answer remembered: repeating it would only cost a request and a write per
// run. That holds for code the gateway answers but does not save (one direct
// call of a tool, docs/how-it-works.md "Learned capabilities"): only a
// report that failed is tried again, at the next run of that code.
//
// Of the run's result it reports only the schema (outputtype.Of:
// types, no values, and no key that holds a .env value or breaks another
// sanitizer rule), which types the capability's result.
func (p *Workspace) learn(code, intent string, an *analysis.Analysis, result json.RawMessage) *wire.CapabilityRef {
	if p.holdsSecret(code, intent) {
		p.log.Debug("run not reported for learning: it holds a secret", "code_hash", an.CodeHash)
		return nil
	}
	p.mu.Lock()
	if r, reported := p.learned[an.CodeHash]; reported {
		p.mu.Unlock()
		return r.ref(learnWait)
	}
	r := &report{done: make(chan struct{})}
	p.learned[an.CodeHash] = r
	p.mu.Unlock()
	p.learning.Add(1)
	go func() {
		defer p.learning.Done()
		defer close(r.done)
		ctx, cancel := context.WithTimeout(context.Background(), learnTimeout)
		defer cancel()
		san, _ := p.secretFilters()
		req := wire.LearnRequest{Code: code, Intent: intent, OutputSchema: outputtype.Of(result, san.Flag)}
		ref, err := p.learnLocal(ctx, req, an)
		if err != nil {
			p.mu.Lock()
			delete(p.learned, an.CodeHash) // not delivered: try again next run
			p.mu.Unlock()
			return
		}
		r.kept = ref
	}()
	return r.ref(learnWait)
}

// learnWait bounds how long an answer waits for its run's report.
const learnWait = 500 * time.Millisecond

// report is one run reported for learning: kept is set before done closes.
type report struct {
	done chan struct{}
	kept *wire.CapabilityRef
}

// ref is what the report kept, once it is done within wait; nil otherwise.
func (r *report) ref(wait time.Duration) *wire.CapabilityRef {
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-r.done:
		return r.kept
	case <-t.C:
		return nil
	}
}

// holdsSecret reports whether code or its intent holds a literal secret: by
// the trace sanitizer's secret rules, or a value of the workspace .env (or
// the package's own gateway key). Such code is never learned: a capability
// is served as it is, and may be shared.
//
// It asks the package's trace sanitizer, rebuilt only when the secret values
// change (secretFilters): it is asked twice per execution, once before the
// gateway round trip (noLearn) and once before the answer (learn), and
// building a sanitizer for a .env of twenty values takes most of a
// millisecond (docs/performance.md "The hybrid path"). Its answer is kept
// per sanitizer, code and intent: the second ask of an execution, and the
// code an AI client sends again, do not run the rules again.
func (p *Workspace) holdsSecret(code, intent string) bool {
	san, _ := p.secretFilters()
	key := secretCheck{san: san, code: code, intent: intent}
	if held, ok := p.secretChecks.Get(key); ok {
		return held
	}
	p.lookups.secretChecks.Add(1)
	held := san.HasSecret(code) || san.HasSecret(intent)
	return p.secretChecks.Add(key, held, len(code)+len(intent))
}

// secretCheck is what holdsSecret's answer depends on: a sanitizer is
// built anew when the secret values change.
type secretCheck struct {
	san          *tracing.Sanitizer
	code, intent string
}

// Bounds of the holdsSecret answers kept: the code of recent executions.
const (
	secretChecksEntries = 256
	secretChecksBytes   = 4 << 20
)

// noLearn is req asking the gateway not to learn it when it holds a secret
// the gateway cannot know of (a .env value), or any other.
func (p *Workspace) noLearn(req wire.ExecuteRequest) wire.ExecuteRequest {
	if !req.Options.Learns() || !p.holdsSecret(req.Code, req.Intent) {
		return req
	}
	opts := wire.ExecuteOptions{}
	if req.Options != nil {
		opts = *req.Options
	}
	opts.Learn = wire.Bool(false)
	req.Options = &opts
	return req
}

// learnLocal reports a successful local run to the gateway, which saves it
// as a capability (the same as its own runs). The run's answer does not
// depend on it: unreachable or failing, it is logged. A nil ref with a nil
// error is the gateway's answer that it does not save this code.
func (p *Workspace) learnLocal(ctx context.Context, req wire.LearnRequest, an *analysis.Analysis) (*wire.CapabilityRef, error) {
	ctx, cancel := context.WithTimeout(ctx, learnTimeout)
	defer cancel()
	ref, err := p.gw.LearnCapability(ctx, req)
	if err != nil {
		p.log.Debug("capability not saved", "code_hash", an.CodeHash, "err", err)
		return nil, fmt.Errorf("report run %s for learning: %w", an.CodeHash, err)
	}
	return ref, nil
}
