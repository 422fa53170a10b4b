package learning

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/pml-go/pml/internal/lru"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/tracing"
	"github.com/pml-go/pml/internal/ttlcache"
)

// The tool graph (docs/how-it-works.md "The tool graph"): per tenant, which
// tools are called together and in which order, learned from traces.
const (
	// maxTraceTools bounds the distinct tools one trace adds edges for.
	maxTraceTools = 32
	// maxPendingTenants and maxPendingEdges bound the counts waiting to be
	// written; past them a trace's edges are dropped until the next flush.
	maxPendingTenants = 1024
	maxPendingEdges   = 1 << 16
	graphCacheTTL     = 30 * time.Second
	graphCacheSize    = 1024
)

// graphTool reports whether id may enter a graph: `ns:action` of letters,
// digits, '_', '.' and '-', each part 1 to 128 bytes. A member posts the
// traces.
func graphTool(id string) bool {
	colon := -1
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case c == ':':
			if colon >= 0 {
				return false
			}
			colon = i
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '.', c == '-':
		default:
			return false
		}
	}
	return colon >= 1 && colon <= 128 && len(id)-colon-1 >= 1 && len(id)-colon-1 <= 128
}

// Neighbor is a tool used with another, and in how many runs.
type Neighbor struct {
	Tool  string `json:"tool"`
	Count int64  `json:"count"`
}

// Graph is one tenant's tool graph, read-only once built but for the
// last blend with the global graph, kept while both stay the same.
type Graph struct {
	out, in map[string][]Neighbor // heaviest first

	mu      sync.Mutex
	blendOf *globalView
	blendN  int
	blended map[string][]Neighbor
}

// blendWith is blend(g, v, n), computed once per global view.
func (g *Graph) blendWith(v *globalView, n int) map[string][]Neighbor {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.blended == nil || g.blendOf != v || g.blendN != n {
		g.blended, g.blendOf, g.blendN = blend(g, v, n), v, n
	}
	return g.blended
}

func buildGraph(edges []store.ToolEdge) *Graph {
	g := &Graph{out: map[string][]Neighbor{}, in: map[string][]Neighbor{}}
	for _, e := range edges {
		w := max(e.Feeds, e.Follows) // runs that used both, about
		g.out[e.From] = append(g.out[e.From], Neighbor{e.To, w})
		g.in[e.To] = append(g.in[e.To], Neighbor{e.From, w})
	}
	for _, m := range []map[string][]Neighbor{g.out, g.in} {
		for k := range m {
			slices.SortFunc(m[k], heaviest)
		}
	}
	return g
}

func heaviest(a, b Neighbor) int {
	return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Tool, b.Tool))
}

// related is the n tools most used with tool, either way round.
func (g *Graph) related(tool string, n int) []Neighbor {
	if g == nil {
		return nil
	}
	sum := map[string]int64{}
	for _, nb := range g.out[tool] {
		sum[nb.Tool] += nb.Count
	}
	for _, nb := range g.in[tool] {
		sum[nb.Tool] += nb.Count
	}
	out := make([]Neighbor, 0, len(sum))
	for t, c := range sum {
		out = append(out, Neighbor{t, c})
	}
	slices.SortFunc(out, heaviest)
	return out[:min(n, len(out))]
}

// Successors is each tool's n most frequent successors (A called before
// B, or A's result fed to B), as discover ranks with them.
func (g *Graph) Successors(n int) map[string][]Neighbor {
	if g == nil || len(g.out) == 0 {
		return nil
	}
	out := make(map[string][]Neighbor, len(g.out))
	for tool, next := range g.out {
		out[tool] = next[:min(n, len(next))]
	}
	return out
}

// edgesOf reads a trace's edges: consecutive distinct tools in call order
// (follows) and the DAG's data dependencies (feeds).
func edgesOf(t tracing.Trace, dagEdges *lru.Cache[string, [][2]string]) []store.ToolEdge {
	tasks := slices.Clone(t.Tasks)
	slices.SortStableFunc(tasks, func(a, b tracing.Task) int { return a.StartedAt.Compare(b.StartedAt) })
	var order []string
	for _, task := range tasks {
		if graphTool(task.ToolID) && !slices.Contains(order, task.ToolID) && len(order) < maxTraceTools {
			order = append(order, task.ToolID)
		}
	}
	edges := map[[2]string]*store.ToolEdge{}
	edge := func(from, to string) *store.ToolEdge {
		k := [2]string{from, to}
		if e, ok := edges[k]; ok {
			return e
		}
		e := &store.ToolEdge{From: from, To: to}
		edges[k] = e
		return e
	}
	for i := 1; i < len(order); i++ {
		edge(order[i-1], order[i]).Follows = 1
	}
	for _, f := range feeds(t.DAG, dagEdges) {
		if slices.Contains(order, f[0]) && slices.Contains(order, f[1]) {
			edge(f[0], f[1]).Feeds = 1
		}
	}
	out := make([]store.ToolEdge, 0, len(edges))
	for _, e := range edges {
		out = append(out, *e)
	}
	slices.SortFunc(out, func(a, b store.ToolEdge) int { return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(a.To, b.To)) })
	return out
}

// feeds are the data dependencies of a trace's DAG between tools, from
// dagEdges when a trace of the same DAG was read lately (code run again
// has the same DAG).
func feeds(dag json.RawMessage, dagEdges *lru.Cache[string, [][2]string]) [][2]string {
	if len(dag) == 0 {
		return nil
	}
	key := string(dag)
	if f, ok := dagEdges.Get(key); ok {
		return f
	}
	var d struct {
		Tasks []struct {
			ID        string   `json:"id"`
			Tool      string   `json:"tool"`
			DependsOn []string `json:"depends_on"`
		} `json:"tasks"`
	}
	var out [][2]string
	if json.Unmarshal(dag, &d) == nil {
		toolOf := map[string]string{}
		for _, task := range d.Tasks {
			toolOf[task.ID] = task.Tool
		}
		for _, task := range d.Tasks {
			for _, dep := range task.DependsOn {
				if from := toolOf[dep]; from != "" && from != task.Tool {
					out = append(out, [2]string{from, task.Tool})
				}
			}
		}
	}
	if len(key) <= maxCachedDAG {
		dagEdges.Add(key, out, len(key)+32*len(out))
	}
	return out
}

// The DAGs whose edges are remembered: at most this many, of at most
// maxCachedDAG bytes each.
const (
	cachedDAGs   = 1024
	maxCachedDAG = 16 << 10
)

// graphs holds the tenants' graphs: counts waiting to be written, and the
// graphs read back, for a short while.
type graphs struct {
	store    store.Store
	dagEdges *lru.Cache[string, [][2]string]
	cache    *ttlcache.Cache[store.Scope, *Graph]
	mu       sync.Mutex
	pending  map[store.Scope]map[[2]string]*store.ToolEdge
	count    int
}

func newGraphs(st store.Store) *graphs {
	return &graphs{store: st, cache: ttlcache.New[store.Scope, *Graph](graphCacheTTL, graphCacheSize),
		dagEdges: lru.New[string, [][2]string](cachedDAGs, cachedDAGs*maxCachedDAG/4),
		pending:  map[store.Scope]map[[2]string]*store.ToolEdge{}}
}

func (g *graphs) add(scope store.Scope, edges []store.ToolEdge) {
	g.mu.Lock()
	defer g.mu.Unlock()
	p, ok := g.pending[scope]
	if !ok {
		if len(g.pending) >= maxPendingTenants {
			return
		}
		p = map[[2]string]*store.ToolEdge{}
		g.pending[scope] = p
	}
	for _, e := range edges {
		k := [2]string{e.From, e.To}
		if have, ok := p[k]; ok {
			have.Feeds += e.Feeds
			have.Follows += e.Follows
			continue
		}
		if g.count >= maxPendingEdges {
			return
		}
		e := e
		p[k] = &e
		g.count++
	}
}

// flush writes the pending counts, one transaction per tenant; shared
// says which edges the tenant contributes to the global layer. It reports
// whether it wrote any.
func (g *graphs) flush(ctx context.Context, shared func(scope store.Scope, from, to string) bool) (bool, error) {
	g.mu.Lock()
	pending := g.pending
	g.pending, g.count = map[store.Scope]map[[2]string]*store.ToolEdge{}, 0
	g.mu.Unlock()
	var errs []error
	for scope, p := range pending {
		edges := make([]store.ToolEdge, 0, len(p))
		for _, e := range p {
			e.Shared = shared(scope, e.From, e.To)
			edges = append(edges, *e)
		}
		for start := 0; start < len(edges); start += store.MaxToolEdges {
			errs = append(errs, g.store.AddToolEdges(ctx, scope, edges[start:min(start+store.MaxToolEdges, len(edges))]))
		}
	}
	return len(pending) > 0, errors.Join(errs...)
}

// get is scope's graph, nil when it has none or the store fails (discover
// then ranks without it).
func (g *graphs) get(ctx context.Context, scope store.Scope) *Graph {
	if g.store == nil {
		return nil
	}
	return cached(ctx, g.cache, scope, func(ctx context.Context) (*Graph, error) {
		edges, err := g.store.ToolEdges(ctx, scope)
		return buildGraph(edges), err
	})
}

// cached is scope's value from cache, else read and kept for the cache's
// lifetime; the zero value when read fails (not kept: the next call reads
// again).
func cached[T any](ctx context.Context, cache *ttlcache.Cache[store.Scope, T], scope store.Scope, read func(context.Context) (T, error)) T {
	now := time.Now()
	if v, ok := cache.Get(scope, now); ok {
		return v
	}
	v, err := read(ctx)
	if err != nil {
		var zero T
		return zero
	}
	cache.Put(scope, v, now)
	return v
}
