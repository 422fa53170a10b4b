package learning

import (
	"context"
	"encoding/json"
	"maps"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pml-go/pml/internal/outputtype"
	"github.com/pml-go/pml/internal/store"
)

// The global layer (docs/how-it-works.md "The global layer"): the tool
// graph and output types of the tools every tenant sees, aggregated across
// tenants under a k rule, so that a new tenant starts with what many others
// learned and no single tenant's habit shows.
const (
	// DefaultGlobalK is how many distinct orgs must share an edge or a
	// tool's results before the global layer shows it.
	DefaultGlobalK = 3
	// globalPrior is N of the blend: the global graph counts as N runs of
	// a tool for a tenant that has none of its own, weighted by
	// 1/(1 + own runs/N) as the tenant's own runs of the tool grow.
	globalPrior = 10
	// maxGlobalEdges and maxGlobalTypeRows bound what one refresh reads:
	// the global graph's edges, and the shared tool types it merges.
	maxGlobalEdges    = 4096
	maxGlobalTypeRows = 4096
	maxGlobalWords    = 20_000
	// globalStale is the age past which a read of the global layer has it
	// read again in the background (another replica's contributions); a
	// flush that wrote contributions reads it at once.
	globalStale = time.Minute
)

// GlobalConfig is the global layer's policy.
type GlobalConfig struct {
	// K is how many distinct orgs must share an edge, or have typed a
	// tool's results, before it counts globally; 0 turns the layer off
	// (nothing is contributed or read).
	K int
	// Common reports whether a tool is one every tenant sees: a built-in
	// or one of the gateway's own servers. Only those enter the layer.
	Common func(tool string) bool
	// OptOut lists the tenants that contribute nothing: a Scope without
	// Project stands for every project of its Org.
	OptOut []store.Scope
}

// optedOut reports whether scope contributes nothing.
func (c GlobalConfig) optedOut(scope store.Scope) bool {
	return slices.ContainsFunc(c.OptOut, func(o store.Scope) bool {
		return o.Org == scope.Org && (o.Project == "" || o.Project == scope.Project)
	})
}

// globalView is one read of the global layer, read-only once built.
type globalView struct {
	at    time.Time
	succ  map[string][]Neighbor // each tool's successors, most orgs first; Count is orgs
	total map[string]int64      // the orgs of each tool's successors, summed
	types map[string]json.RawMessage
	words *wordIndex // what K orgs' runs taught of each tool; weight is orgs
}

// global reads the global layer and keeps the last read.
type global struct {
	cfg        GlobalConfig
	store      store.Store
	view       atomic.Pointer[globalView]
	refreshing atomic.Bool
	mu         sync.Mutex // one refresh at a time
}

func newGlobal(st store.Store, cfg GlobalConfig) *global {
	if cfg.Common == nil {
		cfg.Common = func(string) bool { return false }
	}
	return &global{cfg: cfg, store: st}
}

func (g *global) on() bool { return g.store != nil && g.cfg.K > 0 }

// shares reports whether scope contributes tool (or an edge between two
// such tools) to the layer.
func (g *global) shares(scope store.Scope, tools ...string) bool {
	if !g.on() || g.cfg.optedOut(scope) {
		return false
	}
	for _, t := range tools {
		if !g.cfg.Common(t) {
			return false
		}
	}
	return true
}

// current is the last read, nil before the first or with the layer off.
func (g *global) current() *globalView {
	if !g.on() {
		return nil
	}
	return g.view.Load()
}

// stale reports whether a read is due; it claims it, so one is queued.
func (g *global) stale(now time.Time) bool {
	if !g.on() {
		return false
	}
	if v := g.view.Load(); v != nil && now.Sub(v.at) < globalStale {
		return false
	}
	return g.refreshing.CompareAndSwap(false, true)
}

// refresh reads the global layer: the edges at least K orgs share, and the
// types of tools at least K orgs typed, merged under the k rule; reads are
// bounded (maxGlobalEdges, maxGlobalTypeRows), whatever the tenants.
func (g *global) refresh(ctx context.Context) error {
	defer g.refreshing.Store(false)
	if !g.on() {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	edges, err := g.store.GlobalToolEdges(ctx, store.GlobalEdgeQuery{MinOrgs: g.cfg.K, Limit: maxGlobalEdges})
	var rows []store.SharedToolType
	if err == nil {
		rows, err = g.store.SharedToolTypes(ctx, maxGlobalTypeRows)
	}
	var words []store.GlobalToolWord
	if err == nil {
		words, err = g.store.GlobalToolWords(ctx, g.cfg.K, maxGlobalWords)
	}
	if err != nil {
		// Keep what was read, and try again when it is stale once more,
		// not at every discover while the store fails.
		kept := &globalView{}
		if old := g.view.Load(); old != nil {
			*kept = *old
		}
		kept.at = time.Now()
		g.view.Store(kept)
		return err
	}
	v := &globalView{at: time.Now(), succ: map[string][]Neighbor{}, total: map[string]int64{}}
	for _, e := range edges {
		// The config may have changed since the edge was shared.
		if int(e.Orgs) < g.cfg.K || !g.cfg.Common(e.From) || !g.cfg.Common(e.To) {
			continue
		}
		v.succ[e.From] = append(v.succ[e.From], Neighbor{e.To, e.Orgs})
		v.total[e.From] += e.Orgs
	}
	for tool := range v.succ {
		slices.SortFunc(v.succ[tool], heaviest)
	}
	v.types = globalTypes(rows, g.cfg)
	v.words = newWordIndex()
	for _, w := range words {
		if w.Orgs >= g.cfg.K && g.cfg.Common(w.Tool) && shareable(w.Word) {
			v.words.add(w.Tool, w.Word, float64(w.Orgs)/float64(g.cfg.K)) // K orgs: one lesson
		}
	}
	v.words.finish()
	g.view.Store(v)
	return nil
}

// globalTypes merges the shared tool types: each org's projects into one
// schema of the org (as one tenant's runs merge), then, for a tool at
// least K orgs typed, the orgs' schemas under the k rule.
func globalTypes(rows []store.SharedToolType, cfg GlobalConfig) map[string]json.RawMessage {
	byTool := map[string]map[string]schema{}
	for _, r := range rows {
		if !cfg.Common(r.Tool) || cfg.optedOut(r.Scope) {
			continue
		}
		s := outputtype.Decode(r.Schema)
		if s == nil {
			continue
		}
		orgs, ok := byTool[r.Tool]
		if !ok {
			orgs = map[string]schema{}
			byTool[r.Tool] = orgs
		}
		orgs[r.Scope.Org] = outputtype.MergeTypes(orgs[r.Scope.Org], s)
	}
	out := map[string]json.RawMessage{}
	for tool, orgs := range byTool {
		if len(orgs) < cfg.K {
			continue
		}
		cs := make([]orgSchema, 0, len(orgs))
		for _, org := range slices.Sorted(maps.Keys(orgs)) {
			cs = append(cs, orgSchema{org, orgs[org]})
		}
		if b := outputtype.Bound(globalType(cs, cfg.K), store.MaxToolTypeBytes); b != nil {
			out[tool] = b
		}
	}
	return out
}

// blend is a tenant's successors with the global graph's: for each tool,
// its own runs of each successor plus, spread over the global successors
// by their share of orgs, globalPrior/(1 + own/globalPrior) runs, where own
// is the tenant's runs from the tool. A tenant without history of a tool
// gets the global graph's proportions; as its own runs grow, its own
// counts dominate. At most n successors per tool, heaviest first.
func blend(own *Graph, v *globalView, n int) map[string][]Neighbor {
	var ownOut map[string][]Neighbor
	if own != nil {
		ownOut = own.out
	}
	if v == nil || len(v.succ) == 0 {
		return own.Successors(n)
	}
	out := make(map[string][]Neighbor, len(ownOut)+len(v.succ))
	for tool, next := range ownOut {
		if _, ok := v.succ[tool]; !ok {
			out[tool] = next[:min(n, len(next))]
		}
	}
	for tool, glob := range v.succ {
		weights := map[string]float64{}
		var ownRuns int64
		for _, nb := range ownOut[tool] {
			weights[nb.Tool] += float64(nb.Count)
			ownRuns += nb.Count
		}
		prior := globalPrior / (1 + float64(ownRuns)/globalPrior)
		for _, nb := range glob {
			weights[nb.Tool] += prior * float64(nb.Count) / float64(v.total[tool])
		}
		var list []Neighbor
		for next, w := range weights {
			if c := int64(math.Round(w)); c > 0 && next != tool {
				list = append(list, Neighbor{next, c})
			}
		}
		if len(list) == 0 {
			continue
		}
		slices.SortFunc(list, heaviest)
		out[tool] = list[:min(n, len(list))]
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
