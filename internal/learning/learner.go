// Package learning is PML's procedural memory (docs/how-it-works.md
// "Learned capabilities" and "The tool graph"): it reads what ran, from the
// runs that succeeded and from the traces every run leaves, and writes
// capabilities whose code takes its inputs from args, their schemas, their
// recent outcomes, each tenant's tool graph and tools' output types, and
// reads from them the global layer, what at least k distinct orgs share
// (docs/how-it-works.md "The global layer").
//
// What a run needs back (the capability's reference in its answer) is one
// store write on the run's path, as before; the rest (examples, refined
// code, output schemas, outcomes, the graph, tool types, the global layer)
// is done by one background worker per Learner, after the answer.
package learning

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pml-go/pml/internal/analysis"
	"github.com/pml-go/pml/internal/outputtype"
	"github.com/pml-go/pml/internal/registry"
	"github.com/pml-go/pml/internal/registry/fqdn"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/textcut"
	"github.com/pml-go/pml/internal/tracing"
	"github.com/pml-go/pml/internal/ttlcache"
)

// Config builds a Learner.
type Config struct {
	Store    store.Store
	Registry *registry.Registry
	Analyzer *analysis.Analyzer
	// HasSecret reports a literal secret by the trace sanitizer's rules: a
	// run holding one is not learned.
	HasSecret func(string) bool
	// Flag names the sanitizer rule (secret or personal data) a text
	// breaks, "" for none (tracing.Sanitizer.Flag): no key it flags enters
	// an output schema.
	Flag   func(string) string
	Logger *slog.Logger
	// ArgDoc is what a tool's argument is for, from its input schema's
	// description ("" when it has none): a parameter lifted from the
	// argument says so in its own description.
	ArgDoc func(ctx context.Context, tool, arg string) string
	// Global is the global layer's policy (docs/how-it-works.md "The
	// global layer"); the zero value turns it off.
	Global GlobalConfig
	// OwnDiscovers: a run learns only from the discovers this process
	// noted, not from those another process wrote into the same store, so
	// a run asks the store for its caller's discovers only when this
	// process noted one since it last asked. Local mode sets it: the
	// package's own gateway, whose discovers and runs are one AI client's.
	// A gateway's replicas share a store, and the discover may reach one
	// and the run another: they leave it off.
	OwnDiscovers bool
	// Busy, when set, is told when the background worker starts and
	// returns the function told when it ends: a process whose GOMAXPROCS
	// follows the work in flight (procscale) counts the worker as one
	// request, so that work after an answer does not hold the only
	// processor from the next request (docs/performance.md "The hybrid
	// path").
	Busy func() (end func())
}

// Learner is safe for concurrent use. Close waits for its background work.
type Learner struct {
	store     store.Store
	registry  *registry.Registry
	analyzer  *analysis.Analyzer
	hasSecret func(string) bool
	flag      func(string) string
	argDoc    func(ctx context.Context, tool, arg string) string
	log       *slog.Logger
	busy      func() (end func())
	graph     *graphs
	types     *toolTypes
	global    *global
	typing    atomic.Int64 // bytes of results queued to be typed

	mu         sync.Mutex
	queue      []func(context.Context)
	running    bool
	closed     bool
	idle       *sync.Cond
	flushDue   bool
	flushTimer *time.Timer
	outcomes   map[string]string // capability id -> outcomes not yet written

	shapes  *ttlcache.Cache[shapeKey, store.Capability]
	refined *ttlcache.Cache[refineKey, bool]

	relevance *relevance
	words     *words
}

// maxQueued bounds the background work waiting: past it new work is
// dropped (and logged), so a burst of runs cannot grow memory.
const maxQueued = 4096

// workTimeout bounds one piece of background work.
const workTimeout = 10 * time.Second

// New builds a Learner.
func New(cfg Config) *Learner {
	l := &Learner{store: cfg.Store, registry: cfg.Registry, analyzer: cfg.Analyzer, hasSecret: cfg.HasSecret, flag: cfg.Flag, argDoc: cfg.ArgDoc, log: cfg.Logger, busy: cfg.Busy}
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
	l.types = newToolTypes(cfg.Store, cfg.Flag)
	l.global = newGlobal(cfg.Store, cfg.Global)
	l.outcomes = map[string]string{}
	l.shapes = ttlcache.New[shapeKey, store.Capability](memoryTTL, memorySize)
	l.refined = ttlcache.New[refineKey, bool](memoryTTL, memorySize)
	l.relevance = newRelevance(cfg.Store, l.later, time.Now, l.log, cfg.OwnDiscovers)
	l.words = newWords(cfg.Store, l.later, time.Now, l.global, l.scheduleFlush, cfg.Flag)
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
	// Reported says a package ran it and reported it (OutputSchema, when
	// it could type the value); else this process ran it (Result).
	Reported bool
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
	r.Intent = Intent(r.Intent)
	shape := analysis.ShapeOf(r.Code)
	if shape.DirectCall {
		return store.Capability{}, false, nil
	}
	// The strings the code builds from constants too: a secret written in
	// parts is still written in the code (analysis.Folded).
	if l.hasSecret(r.Code) || l.hasSecret(r.Intent) || FoldedSecret(r.Analysis.Folded(r.Code), l.hasSecret) {
		l.log.Info("run not learned: its code or intent holds a secret", "org", r.Scope.Org, "project", r.Scope.Project, "code_hash", r.Analysis.CodeHash)
		return store.Capability{}, false, nil
	}
	// Typed by shape alone on the answer's path; the sanitizer's rules,
	// which cost tens of microseconds a key, are applied to a new
	// capability's schema before it is saved, and to a known one's in
	// refine, after the answer.
	out := outputtype.Of(r.Result, nil)
	if r.Reported {
		out = outputtype.Clean(r.OutputSchema, nil)
	}
	if (out == nil && !r.Reported) || outputtype.IsNull(out) {
		// It returned nothing (it forgot its return, or only acted): a
		// skill a caller could not use the answer of.
		return store.Capability{}, false, nil
	}
	k, now := shapeKey{r.Scope, shape.Hash}, time.Now()
	if known, ok := l.shapes.Get(k, now); ok {
		// A shape this process saved lately: one write to count the use,
		// as before lifting; the rest after the answer. Its intent says
		// whether the run is a habit's (store.Capability.Habit).
		known.Code, known.ArgsSchema, known.OutputSchema, known.ParamsLifted = r.Code, nil, nil, false
		known.Description = r.Intent
		saved, err := l.registry.Save(ctx, known)
		if err != nil {
			return store.Capability{}, false, fmt.Errorf("saving capability: %w", err)
		}
		l.afterRun(saved, r, shape, out)
		return saved, true, nil
	}
	lifted := l.lift(ctx, r.Code, r.Analysis, "")
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
		OutputSchema: outputtype.Clean(out, l.flag),
	})
	if err != nil {
		return store.Capability{}, false, fmt.Errorf("saving capability: %w", err)
	}
	l.shapes.Put(k, saved, now)
	if saved.UsageCount > 1 {
		l.afterRun(saved, r, shape, out)
	} else {
		l.refined.Put(refineKey{saved.ID, shape.Values, string(out)}, true, now)
	}
	return saved, true, nil
}

// MaxDescriptionBytes bounds a capability's description (its intent, or
// what admin describe sets): it is shown in every discover that finds it,
// to other projects too when it is shared.
const MaxDescriptionBytes = 1024

// Intent is an intent as a capability keeps it: without the characters
// that hide or reorder text (textcut.Printable), cut at a word to
// MaxDescriptionBytes.
func Intent(intent string) string {
	return textcut.Words(strings.TrimSpace(textcut.Printable(intent)), MaxDescriptionBytes)
}

// shapeKey names the capability of a shape in a project.
type shapeKey struct {
	scope store.Scope
	hash  string
}

// refineKey is what a run can teach a capability: its values and its
// result's type.
type refineKey struct {
	id, values, output string
}

// How long, and how many, shapes and refinements are remembered: a run
// of a known shape skips naming and lifting, and one with values already
// merged skips refining.
const (
	memoryTTL  = time.Minute
	memorySize = 10_000
)

// afterRun counts a successful run of saved's shape, and refines saved
// with it after the answer unless a run with the same values and result
// type already did.
func (l *Learner) afterRun(saved store.Capability, r Run, shape analysis.Shape, out json.RawMessage) {
	l.outcome(saved.ID, true)
	k, now := refineKey{saved.ID, shape.Values, string(out)}, time.Now()
	if _, done := l.refined.Get(k, now); done {
		return
	}
	l.refined.Put(k, true, now)
	id, code, an := saved.ID, r.Code, r.Analysis
	l.later(func(ctx context.Context) { l.refine(ctx, id, code, an, out) })
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
func (l *Learner) lift(ctx context.Context, code string, an *analysis.Analysis, variant string) lifted {
	plain := lifted{code: code, schema: an.ArgsSchema}
	var variants []string
	if variant != "" {
		variants = []string{variant}
	}
	if an.Dynamic {
		return plain // a literal may name the tool: learned without parameters
	}
	lf, ok := analysis.Lift(code, variants...)
	if !ok || len(lf.Params) == 0 || !analysis.GivesBack(lf.Code, lf.Params, code) {
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
	doc := func(tool, arg string) string {
		if l.argDoc == nil {
			return ""
		}
		return l.argDoc(ctx, tool, arg)
	}
	return lifted{code: lf.Code, schema: paramsSchema(again.ArgsSchema, lf.Params, doc), params: lf.Params, ok: true}
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
// examples and the output schema widens. A capability learned before
// parameters were lifted is lifted now.
func (l *Learner) refine(ctx context.Context, id, runCode string, runAn *analysis.Analysis, out json.RawMessage) {
	c, err := l.store.CapabilityByID(ctx, id)
	if err != nil {
		l.log.Warn("learning: capability to refine", "id", id, "err", err)
		return
	}
	first := c.Code // the run the capability came from
	if c.ParamsLifted {
		if first, err = l.firstRun(c); err != nil {
			l.log.Warn("learning: capability code does not parse", "id", id, "err", err)
			return
		}
	}
	next := c
	next.OutputSchema = outputtype.Merge(c.OutputSchema, outputtype.Clean(out, l.flag))
	// The same values as the first run (the same code, but for comments or
	// spacing) teach nothing new but the result's type: no rewrite.
	if !analysis.SameLiterals(first, runCode) || !c.ParamsLifted {
		an, err := analysis.Analyze(first) // uncached: the clients' code owns the cache
		if err != nil {
			return
		}
		// A rewrite is kept only when the values of both runs, written back,
		// give each run's code: it claims nothing it cannot prove.
		if capL := l.lift(ctx, first, an, runCode); capL.ok {
			runL := l.lift(ctx, runCode, runAn, first)
			if runL.ok && len(runL.params) == len(capL.params) && analysis.GivesBack(capL.code, runL.params, runCode) {
				next.Code, next.ParamsLifted = capL.code, true
				next.ArgsSchema = addExamples(keepExamples(capL.schema, c.ArgsSchema), runL.params)
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
	for name, p := range outputtype.ObjectOf(outputtype.Decode(c.ArgsSchema)["properties"]) {
		if def, ok := outputtype.ObjectOf(p)["default"]; ok {
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
	s, o := outputtype.Decode(schema), outputtype.Decode(old)
	props, oldProps := outputtype.ObjectOf(s["properties"]), outputtype.ObjectOf(o["properties"])
	for name, p := range props {
		if ex, ok := outputtype.ObjectOf(oldProps[name])["examples"]; ok && outputtype.ObjectOf(p) != nil {
			outputtype.ObjectOf(p)["examples"] = ex
		}
	}
	return outputtype.Encode(s)
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
// on: its tools' order and data flow feed scope's tool graph, its
// successful calls' results type the tools' output, and a run of one of
// scope's own capabilities counts as its outcome. A run executed locally
// also counts as a call of that capability (its Uses): the package ran it
// on its machine, so the gateway, which counts the calls it runs itself,
// never saw it. A trace is whatever a member posted: it can only ever touch
// its own tenant, and the global layer only through the k rule.
func (l *Learner) ObserveTrace(scope store.Scope, t tracing.Trace) {
	l.relevance.used(scope, t.Caller, calledTools(t))
	if l.store == nil {
		return
	}
	edges := edgesOf(t, l.graph.dagEdges)
	fqdn, success, local := t.CapabilityFQDN, t.Success, t.ExecutedLocally
	if len(edges) > 0 {
		l.graph.add(scope, edges)
		l.scheduleFlush()
	}
	if results := l.types.wanted(scope, resultsOf(t)); len(results) > 0 {
		l.typeLater(scope, results)
	}
	if fqdn != "" {
		l.later(func(ctx context.Context) { l.countRun(ctx, scope, fqdn, success, local) })
	}
}

// calledTools are the tool ids a trace's run called.
func calledTools(t tracing.Trace) []string {
	var out []string
	for _, task := range t.Tasks {
		if task.ToolID != "" && !slices.Contains(out, task.ToolID) {
			out = append(out, task.ToolID)
		}
	}
	for _, id := range t.ToolsUsed {
		if graphTool(id) && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// NoteDiscover notes that who's discover of query showed shown, so that
// the tools who's next runs call teach the tenant what the query's family
// needs (docs/how-it-works.md "Discover and the tool graph").
func (l *Learner) NoteDiscover(scope store.Scope, who, query string, shown []string) {
	l.relevance.discovered(scope, who, query, shown)
	l.words.noteQuery(scope, who, query)
}

// LearnWords teaches scope that the words of a successful run's intent,
// and of who's discover before it, are words of each tool the run used
// (docs/how-it-works.md "Discover and the tool graph"). It writes after
// the answer.
func (l *Learner) LearnWords(scope store.Scope, who, intent string, used []string) {
	l.words.learn(scope, who, Intent(intent), used)
}

// Boost is what scope's runs after discovers of query's family taught of
// each tool, in (0, 1]; nil when nothing.
func (l *Learner) Boost(ctx context.Context, scope store.Scope, query string) map[string]float64 {
	return l.relevance.boost(ctx, scope, query)
}

// LearnedText answers the words runs taught of a tool (tools.Info.Learned):
// scope's own, then the global layer's.
func (l *Learner) LearnedText(ctx context.Context, scope store.Scope) func(tool string) string {
	own := l.words.index(ctx, scope)
	var global *wordIndex
	if v := l.globalView(); v != nil {
		global = v.words
	}
	return func(tool string) string {
		var o, g string
		if own != nil {
			o = own.texts[tool]
		}
		if global != nil {
			g = global.texts[tool]
		}
		return mergeLearned(o, g)
	}
}

// mergeLearned is a tool's learned text: the tenant's own words, then the
// global layer's it has not. The tenant's words are the layer's too when it
// contributed them: each counts once, as the tenant taught it.
func mergeLearned(own, global string) string {
	if own == "" || global == "" {
		return own + global
	}
	var b strings.Builder
	b.WriteString(own)
	padded := " " + own // each word ends with a space (wordIndex.finish)
	for w := range strings.FieldsSeq(global) {
		if !strings.Contains(padded, " "+w+" ") {
			b.WriteString(w)
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// maxTypingBytes bounds the bytes of results waiting to be typed: past
// it, a trace's results are not typed (its tools are typed by later calls).
const maxTypingBytes = 16 << 20

// typeLater types results of scope's calls after the caller goes on.
func (l *Learner) typeLater(scope store.Scope, results []typedResult) {
	var size int64
	for _, r := range results {
		size += int64(len(r.result))
	}
	if l.typing.Add(size) > maxTypingBytes {
		l.typing.Add(-size)
		return
	}
	if !l.later(func(context.Context) {
		defer l.typing.Add(-size)
		l.types.observe(scope, results)
		l.scheduleFlush()
	}) {
		l.typing.Add(-size)
	}
}

// countRun records a run of the capability named by its FQDN when it is
// scope's own (its current version's, when the trace names an older one):
// its outcome, and for a local run one more call.
func (l *Learner) countRun(ctx context.Context, scope store.Scope, name string, ok, local bool) {
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
	l.outcome(e.Capability.ID, ok)
	if !local {
		return
	}
	if err := l.store.CountCapabilityUse(ctx, e.Capability.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
		l.log.Warn("learning: counting a capability's local run", "id", e.Capability.ID, "err", err)
	}
}

// maxPendingOutcomes bounds the capabilities whose outcomes wait to be
// written.
const maxPendingOutcomes = 4096

// outcome counts one run of the capability id, written with the graph.
func (l *Learner) outcome(id string, ok bool) {
	letter := "0"
	if ok {
		letter = "1"
	}
	l.mu.Lock()
	p, has := l.outcomes[id]
	if has || len(l.outcomes) < maxPendingOutcomes {
		p += letter
		l.outcomes[id] = p[max(0, len(p)-store.MaxRecentRuns):]
	}
	l.mu.Unlock()
	l.scheduleFlush()
}

// Related returns the tools most often used with tool in scope, heaviest
// first, at most n.
func (l *Learner) Related(ctx context.Context, scope store.Scope, tool string, n int) []Neighbor {
	return l.graph.get(ctx, scope).related(tool, n)
}

// Graph returns scope's own tool graph.
func (l *Learner) Graph(ctx context.Context, scope store.Scope) *Graph {
	return l.graph.get(ctx, scope)
}

// Successors is each tool's n most frequent successors as discover ranks
// with them: scope's own graph blended with the global one (blend).
func (l *Learner) Successors(ctx context.Context, scope store.Scope, n int) map[string][]Neighbor {
	own, v := l.graph.get(ctx, scope), l.globalView()
	if own == nil {
		return blend(nil, v, n)
	}
	return own.blendWith(v, n)
}

// OutputTypes returns, for a tool, the output schema inferred from scope's
// own successful calls of it, else, when global, from the global layer's,
// and whether there is one (docs/how-it-works.md "The global layer").
func (l *Learner) OutputTypes(ctx context.Context, scope store.Scope) func(tool string, global bool) (json.RawMessage, bool) {
	own, v := l.types.get(ctx, scope), l.globalView()
	return func(tool string, global bool) (json.RawMessage, bool) {
		if s, ok := own[tool]; ok {
			return s, true
		}
		if global && v != nil {
			s, ok := v.types[tool]
			return s, ok
		}
		return nil, false
	}
}

// globalView is the global layer as last read; one older than
// globalStale is read again in the background, never on the caller's path.
func (l *Learner) globalView() *globalView {
	if l.global.stale(time.Now()) && !l.later(func(ctx context.Context) { l.refreshGlobal(ctx) }) {
		l.global.refreshing.Store(false)
	}
	return l.global.current()
}

func (l *Learner) refreshGlobal(ctx context.Context) {
	if err := l.global.refresh(ctx); err != nil {
		l.log.Warn("learning: reading the global layer", "err", err)
	}
}

// Withdraw withdraws the contributions of the tenants that opted out of
// the global layer (GlobalConfig.OptOut), made before they did.
func (l *Learner) Withdraw(ctx context.Context) error {
	if !l.global.on() {
		return nil
	}
	var errs []error
	for _, sc := range l.global.cfg.OptOut {
		errs = append(errs, l.store.Unshare(ctx, sc), l.store.WithdrawToolWords(ctx, sc))
	}
	return errors.Join(errs...)
}

// flushEvery is how often the tool graph's pending counts and the
// capabilities' outcomes are written: at most one transaction per tenant
// and one statement per capability per interval, however many runs end.
const flushEvery = 5 * time.Second

// later queues background work; the worker runs while there is some. It
// reports whether f was queued.
func (l *Learner) later(f func(context.Context)) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return false
	}
	if len(l.queue) >= maxQueued {
		l.log.Warn("learning: background queue full; dropping one piece of work")
		return false
	}
	l.queue = append(l.queue, f)
	if !l.running {
		l.running = true
		end := func() {}
		if l.busy != nil {
			end = l.busy()
		}
		go l.work(end)
	}
	return true
}

// scheduleFlush writes what is pending flushEvery from now, unless a
// write is already due.
func (l *Learner) scheduleFlush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.flushDue || l.closed {
		return
	}
	l.flushDue = true
	l.flushTimer = time.AfterFunc(flushEvery, func() {
		l.mu.Lock()
		l.flushDue = false
		l.mu.Unlock()
		l.later(func(context.Context) { l.flush() })
	})
}

// work runs the queue until it is empty, and ends: an idle Learner holds
// no goroutine. It calls end (Config.Busy's) before it says it is idle.
func (l *Learner) work(end func()) {
	for {
		l.mu.Lock()
		if len(l.queue) == 0 {
			end()
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

// flush writes the tool graph's pending counts, the tool types and the
// capabilities' pending outcomes. When it wrote edges or types it reads
// the global layer again before it forgets the graphs and types read
// before them, so a tenant that sees its own new edges sees a global
// layer read after them.
func (l *Learner) flush() {
	ctx, cancel := context.WithTimeout(context.Background(), workTimeout)
	defer cancel()
	wroteEdges, err := l.graph.flush(ctx, func(sc store.Scope, from, to string) bool { return l.global.shares(sc, from, to) })
	if err != nil {
		l.log.Warn("learning: writing the tool graph", "err", err)
	}
	wroteTypes, err := l.types.flush(ctx, func(sc store.Scope, tool string) bool { return l.global.shares(sc, tool) })
	if err != nil {
		l.log.Warn("learning: writing tool types", "err", err)
	}
	wroteWords := l.words.shared.Swap(false)
	if wroteEdges || wroteTypes || wroteWords {
		if l.global.on() {
			l.refreshGlobal(ctx)
		}
		l.graph.cache.Clear()
		l.types.cache.Clear()
	}
	l.mu.Lock()
	outcomes := l.outcomes
	l.outcomes = map[string]string{}
	l.mu.Unlock()
	for id, o := range outcomes {
		if err := l.store.RecordCapabilityRuns(ctx, id, o); err != nil && !errors.Is(err, store.ErrNotFound) {
			l.log.Warn("learning: recording a capability's outcomes", "id", id, "err", err)
		}
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
	l.flush()
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
	l.flush()
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
