// Package learning is PML's procedural memory (docs/how-it-works.md
// "Learned capabilities" and "The tool graph"): it reads what ran, from the
// runs that succeeded and from the traces every run leaves, and writes
// capabilities whose code takes its inputs from args, their schemas, their
// recent outcomes, and each tenant's tool graph.
//
// What a run needs back (the capability's reference in its answer) is one
// store write on the run's path, as before; the rest (examples, refined
// code, output schemas, outcomes, the graph) is done by one background
// worker per Learner, after the answer.
package learning

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/pml-go/pml/internal/analysis"
	"github.com/pml-go/pml/internal/registry"
	"github.com/pml-go/pml/internal/registry/fqdn"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/tracing"
)

// Config builds a Learner.
type Config struct {
	Store    store.Store
	Registry *registry.Registry
	Analyzer *analysis.Analyzer
	// HasSecret reports a literal secret by the trace sanitizer's rules: a
	// run holding one is not learned.
	HasSecret func(string) bool
	Logger    *slog.Logger
}

// Learner is safe for concurrent use. Close waits for its background work.
type Learner struct {
	store     store.Store
	registry  *registry.Registry
	analyzer  *analysis.Analyzer
	hasSecret func(string) bool
	log       *slog.Logger
	graph     *graphs

	mu         sync.Mutex
	queue      []func(context.Context)
	running    bool
	closed     bool
	idle       *sync.Cond
	flushDue   bool
	flushTimer *time.Timer
}

// maxQueued bounds the background work waiting: past it new work is
// dropped (and logged), so a burst of runs cannot grow memory.
const maxQueued = 4096

// workTimeout bounds one piece of background work.
const workTimeout = 10 * time.Second

// New builds a Learner.
func New(cfg Config) *Learner {
	l := &Learner{store: cfg.Store, registry: cfg.Registry, analyzer: cfg.Analyzer, hasSecret: cfg.HasSecret, log: cfg.Logger}
	if l.log == nil {
		l.log = slog.New(slog.DiscardHandler)
	}
	if l.hasSecret == nil {
		l.hasSecret = func(string) bool { return false }
	}
	if l.analyzer == nil {
		l.analyzer = analysis.New(256)
	}
	l.idle = sync.NewCond(&l.mu)
	l.graph = newGraphs(cfg.Store)
	return l
}

// Run is a successful run to learn from.
type Run struct {
	Scope        store.Scope
	Code, Intent string
	Analysis     *analysis.Analysis // of Code
	Routing      string             // where its tools run: "client" or "server"
	// Result is the run's value, when this process ran it; OutputSchema
	// the schema of its value when the package did (it sends no values).
	Result       json.RawMessage
	OutputSchema json.RawMessage
}

// Learn saves a successful run as a capability under the learning policy
// (docs/how-it-works.md "Learned capabilities"), or returns the
// capability of its shape, counting one more use; ok is false for a run
// that is not learned. Refining an existing capability with this run
// happens after Learn returns.
func (l *Learner) Learn(ctx context.Context, r Run) (c store.Capability, ok bool, err error) {
	if l.store == nil || r.Scope.Org == "" || len(r.Analysis.Tools) == 0 {
		return store.Capability{}, false, nil
	}
	shape := analysis.ShapeOf(r.Code)
	if shape.DirectCall {
		return store.Capability{}, false, nil
	}
	if l.hasSecret(r.Code) || l.hasSecret(r.Intent) {
		l.log.Info("run not learned: its code or intent holds a secret", "org", r.Scope.Org, "project", r.Scope.Project, "code_hash", r.Analysis.CodeHash)
		return store.Capability{}, false, nil
	}
	out := OutputSchema(r.Result)
	if out == nil {
		out = checkReported(r.OutputSchema)
	}
	lifted := l.lift(r.Code, r.Analysis, "")
	action, err := l.name(ctx, r.Scope, r.Intent, shape.Hash, r.Analysis.Tools)
	if err != nil {
		return store.Capability{}, false, err
	}
	saved, err := l.registry.Save(ctx, store.Capability{
		Scope:        r.Scope,
		Namespace:    registry.DefaultNamespace,
		Action:       action,
		Description:  r.Intent,
		Code:         lifted.code,
		CodeHash:     shape.Hash,
		ToolsUsed:    nonNil(r.Analysis.Tools),
		Routing:      r.Routing,
		ArgsSchema:   lifted.schema,
		ParamsLifted: lifted.ok,
		OutputSchema: out,
	})
	if err != nil {
		return store.Capability{}, false, fmt.Errorf("saving capability: %w", err)
	}
	if saved.UsageCount > 1 {
		id, code, an := saved.ID, r.Code, r.Analysis
		l.later(func(ctx context.Context) { l.refine(ctx, id, code, an, out) })
	}
	return saved, true, nil
}

// lifted is code made to read its run's values from args, and its input
// schema; ok is false when nothing could be lifted safely and code is the
// run's own.
type lifted struct {
	code   string
	schema json.RawMessage
	params []analysis.Param
	ok     bool
}

// lift rewrites code's literals into parameters (analysis.Lift), against a
// variant of its shape when one is given, and keeps the rewrite only when it
// analyses to the same DAG as the run and no value holds a secret.
func (l *Learner) lift(code string, an *analysis.Analysis, variant string) lifted {
	plain := lifted{code: code, schema: an.ArgsSchema}
	var variants []string
	if variant != "" {
		variants = []string{variant}
	}
	if an.Dynamic {
		return plain // a literal may name the tool: learned without parameters
	}
	lf, ok := analysis.Lift(code, variants...)
	if !ok || len(lf.Params) == 0 {
		return plain
	}
	for _, p := range lf.Params {
		if l.hasSecret(string(p.JSONValue())) {
			return plain
		}
	}
	// Uncached: the rewrite is analysed once, and must not take a place in
	// the cache of the code clients send.
	again, err := analysis.Analyze(lf.Code)
	if err != nil || !sameDAG(an, again) {
		l.log.Warn("learning: lifted code does not analyse to the run's DAG; kept without parameters", "code_hash", an.CodeHash, "err", err)
		return plain
	}
	return lifted{code: lf.Code, schema: paramsSchema(again.ArgsSchema, lf.Params), params: lf.Params, ok: true}
}

// sameDAG reports whether two analyses call the same tools with the same
// dependencies and layers.
func sameDAG(a, b *analysis.Analysis) bool {
	return slices.EqualFunc(a.DAG.Tasks, b.DAG.Tasks, func(x, y analysis.Task) bool {
		return x.Tool == y.Tool && x.Layer == y.Layer && slices.Equal(x.DependsOn, y.DependsOn) && slices.Equal(x.Loops, y.Loops)
	}) && a.Dynamic == b.Dynamic
}

// refine merges one more run of a capability's shape into it: the values
// that differ between its runs become parameters, the run's values become
// examples, the output schema widens, and its outcomes count a success. A
// capability learned before parameters were lifted is lifted now.
func (l *Learner) refine(ctx context.Context, id, runCode string, runAn *analysis.Analysis, out json.RawMessage) {
	c, err := l.store.CapabilityByID(ctx, id)
	if err != nil {
		l.log.Warn("learning: capability to refine", "id", id, "err", err)
		return
	}
	if err := l.store.RecordCapabilityRun(ctx, id, true); err != nil {
		l.log.Warn("learning: recording a run", "id", id, "err", err)
	}
	first := c.Code // the run the capability came from
	if c.ParamsLifted {
		if first, err = l.firstRun(c); err != nil {
			l.log.Warn("learning: capability code does not parse", "id", id, "err", err)
			return
		}
	}
	next := c
	next.OutputSchema = mergeOutput(c.OutputSchema, out)
	// The same values as the first run (the same code, but for comments or
	// spacing) teach nothing new but the result's type: no rewrite.
	if !analysis.SameLiterals(first, runCode) || !c.ParamsLifted {
		an, err := analysis.Analyze(first) // uncached: the clients' code owns the cache
		if err != nil {
			return
		}
		if capL := l.lift(first, an, runCode); capL.ok {
			runL := l.lift(runCode, runAn, first)
			next.Code, next.ParamsLifted = capL.code, true
			next.ArgsSchema = keepExamples(capL.schema, c.ArgsSchema)
			if runL.ok && len(runL.params) == len(capL.params) {
				next.ArgsSchema = addExamples(next.ArgsSchema, runL.params)
			}
		}
	}
	if next.Code == c.Code && string(next.ArgsSchema) == string(c.ArgsSchema) && string(next.OutputSchema) == string(c.OutputSchema) &&
		next.ParamsLifted == c.ParamsLifted {
		return
	}
	if err := l.registry.Relearn(ctx, next); err != nil {
		l.log.Warn("learning: refining capability", "id", id, "err", err)
	}
}

// firstRun is a lifted capability's code with its defaults written back:
// the run it was learned from.
func (l *Learner) firstRun(c store.Capability) (string, error) {
	values := map[string]any{}
	for name, p := range objectOf(decode(c.ArgsSchema)["properties"]) {
		if def, ok := objectOf(p)["default"]; ok {
			values[name] = def
		}
	}
	code, ok := analysis.Substitute(c.Code, values)
	if !ok {
		return "", errors.New("substituting defaults")
	}
	return code, nil
}

// keepExamples carries the examples of old's parameters into schema, for
// those schema still has.
func keepExamples(schema, old json.RawMessage) json.RawMessage {
	s, o := decode(schema), decode(old)
	props, oldProps := objectOf(s["properties"]), objectOf(o["properties"])
	for name, p := range props {
		if ex, ok := objectOf(oldProps[name])["examples"]; ok && objectOf(p) != nil {
			objectOf(p)["examples"] = ex
		}
	}
	return encode(s)
}

// name is a new capability's action (actionFor). When the project already
// has that name for code of another shape, a name from the intent holds
// the new code as a new version when it uses the same tools (the intent
// evolved), while a generated name, or an intent shared by code using
// other tools, gets the first four hex digits of the shape: another
// capability that happens to read alike.
func (l *Learner) name(ctx context.Context, sc store.Scope, intent, shapeHash string, used []string) (string, error) {
	action := actionFor(intent, shapeHash, used)
	prev, err := l.store.CapabilityByName(ctx, sc, registry.DefaultNamespace, action)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return action, nil
	case err != nil:
		return "", fmt.Errorf("naming capability: %w", err)
	case prev.Scope != sc || prev.CodeHash == shapeHash:
		return action, nil
	case intent != "" && slices.Equal(prev.ToolsUsed, used):
		return action, nil
	}
	return action + "_" + shapeHash[:4], nil
}

// ObserveTrace learns from a stored trace of scope, after the caller goes
// on: its tools' order and data flow feed scope's tool graph, and a run of
// one of scope's own capabilities counts as its outcome. A trace is
// whatever a member posted: it can only ever touch its own tenant.
func (l *Learner) ObserveTrace(scope store.Scope, t tracing.Trace) {
	if l.store == nil {
		return
	}
	edges := edgesOf(t)
	fqdn, success := t.CapabilityFQDN, t.Success
	if len(edges) == 0 && fqdn == "" {
		return
	}
	if len(edges) > 0 {
		l.graph.add(scope, edges)
		l.scheduleFlush()
	}
	if fqdn != "" {
		l.later(func(ctx context.Context) { l.countOutcome(ctx, scope, fqdn, success) })
	}
}

// countOutcome records a run of the capability named by its FQDN when it
// is scope's own (its current version's, when the trace names an older one).
func (l *Learner) countOutcome(ctx context.Context, scope store.Scope, name string, ok bool) {
	n, err := fqdn.Parse(name)
	if err != nil || n.Org != scope.Org || n.Project != scope.Project {
		return
	}
	e, err := l.registry.Get(ctx, scope, n)
	var moved *registry.HashMismatchError
	if errors.As(err, &moved) {
		e, err = moved.Current, nil
	}
	if err != nil || e.Capability == nil || e.Capability.Scope != scope {
		return
	}
	if err := l.store.RecordCapabilityRun(ctx, e.Capability.ID, ok); err != nil {
		l.log.Warn("learning: recording a capability's outcome", "capability", name, "err", err)
	}
}

// Related returns the tools most often used with tool in scope, heaviest
// first, at most n.
func (l *Learner) Related(ctx context.Context, scope store.Scope, tool string, n int) []Neighbor {
	return l.graph.get(ctx, scope).related(tool, n)
}

// Graph returns scope's tool graph as discover ranks with it.
func (l *Learner) Graph(ctx context.Context, scope store.Scope) *Graph {
	return l.graph.get(ctx, scope)
}

// graphFlushEvery is how often the tool graph's pending counts are
// written: at most one transaction per tenant per interval, however many
// traces arrive.
const graphFlushEvery = time.Second

// later queues background work; the worker runs while there is some.
func (l *Learner) later(f func(context.Context)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	if len(l.queue) >= maxQueued {
		l.log.Warn("learning: background queue full; dropping one piece of work")
		return
	}
	l.queue = append(l.queue, f)
	if !l.running {
		l.running = true
		go l.work()
	}
}

// scheduleFlush writes the graph's pending counts graphFlushEvery from now,
// unless a write is already due.
func (l *Learner) scheduleFlush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.flushDue || l.closed {
		return
	}
	l.flushDue = true
	l.flushTimer = time.AfterFunc(graphFlushEvery, func() {
		l.mu.Lock()
		l.flushDue = false
		l.mu.Unlock()
		l.later(func(context.Context) { l.flushGraph() })
	})
}

// work runs the queue until it is empty, and ends: an idle Learner holds
// no goroutine.
func (l *Learner) work() {
	for {
		l.mu.Lock()
		if len(l.queue) == 0 {
			l.running = false
			l.idle.Broadcast()
			l.mu.Unlock()
			return
		}
		f := l.queue[0]
		l.queue[0] = nil
		l.queue = l.queue[1:]
		l.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), workTimeout)
		f(ctx)
		cancel()
	}
}

func (l *Learner) flushGraph() {
	ctx, cancel := context.WithTimeout(context.Background(), workTimeout)
	defer cancel()
	if err := l.graph.flush(ctx); err != nil {
		l.log.Warn("learning: writing the tool graph", "err", err)
	}
}

// Wait blocks until the background work queued so far is done, and the
// tool graph's pending counts are written.
func (l *Learner) Wait() {
	l.mu.Lock()
	for l.running {
		l.idle.Wait()
	}
	l.mu.Unlock()
	l.flushGraph()
}

// Close finishes the queued work, writes the graph's pending counts and
// refuses more.
func (l *Learner) Close() {
	l.mu.Lock()
	l.closed = true
	if l.flushTimer != nil {
		l.flushTimer.Stop()
	}
	l.flushDue = false
	for l.running {
		l.idle.Wait()
	}
	l.mu.Unlock()
	l.flushGraph()
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
