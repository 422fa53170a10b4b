package learning

import (
	"context"
	"log/slog"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pml-go/pml/internal/lru"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/tools"
	"github.com/pml-go/pml/internal/ttlcache"
)

// Learning from use (docs/how-it-works.md "Discover and the tool graph"):
// a discover followed, by the same caller within feedbackWindow, by a run
// that calls tools teaches the tenant that the query's family (queries of
// mostly the same words) leads to those tools; a tool the discover showed
// and the run did not call loses some of what it had. A later discover of
// the family lifts the tools by what they gained, decayed by age; a query
// of no learned family is not moved.
//
// It is kept beside the tenant's tool graph in the store, so that a
// discover on one replica and the run after it on another still teach,
// and what was learned outlives a restart; the gateway writes it after
// the answer, and reads a tenant's through a cache like the graph's.
// Without a store (tests), it is kept in memory, bounded.
const (
	feedbackWindow    = 15 * time.Minute
	relevanceHalfLife = 7 * 24 * time.Hour
	// minFamily is the share of words two queries must share (Jaccard) to
	// be of one family.
	minFamily = 0.5
	// maxGain caps what one tool gains for one family; unusedLoss is what
	// a tool shown and not called loses; a gain decayed below minGain is
	// gone.
	maxGain    = 4.0
	unusedLoss = 0.25
	minGain    = 0.05
	// fullGain is the gain of a tool whose boost is full: two uses.
	fullGain = 2.0

	maxRelevanceTenants = 1024 // in memory
	maxFamilies         = 256  // a tenant's, in memory
	maxFamilyTools      = 16
)

// relevance is every tenant's learned relevance.
type relevance struct {
	store store.Store // nil: in memory
	later func(func(context.Context)) bool
	now   func() time.Time
	log   *slog.Logger
	cache *ttlcache.Cache[store.Scope, []*family] // with a store: a tenant's families as last read
	mem   *lru.Cache[store.Scope, *tenantRelevance]

	// own is Config.OwnDiscovers. taken then holds the callers whose
	// discovers this process took from the store and has noted none of
	// since: their runs have nothing to learn from, and do not ask the
	// store (a write, once per run). Only the work run by later (one at a
	// time, in order) reads and writes it, so a discover's write comes
	// before the take of any run after it.
	own     bool
	takenMu sync.Mutex
	taken   map[seenBy]bool
}

// seenBy names whose discovers: a caller of a tenant.
type seenBy struct {
	scope store.Scope
	who   string
}

func newRelevance(st store.Store, later func(func(context.Context)) bool, now func() time.Time, log *slog.Logger, own bool) *relevance {
	return &relevance{store: st, later: later, now: now, log: log, own: own, taken: map[seenBy]bool{},
		cache: ttlcache.New[store.Scope, []*family](graphCacheTTL, graphCacheSize),
		mem:   lru.New[store.Scope, *tenantRelevance](maxRelevanceTenants, maxRelevanceTenants)}
}

// setTaken records whether by's discovers are all taken (see taken).
func (r *relevance) setTaken(by seenBy, taken bool) {
	r.takenMu.Lock()
	defer r.takenMu.Unlock()
	switch {
	case !taken:
		delete(r.taken, by)
	case len(r.taken) < maxRelevanceTenants: // else the store is asked, as without own
		r.taken[by] = true
	}
}

func (r *relevance) isTaken(by seenBy) bool {
	r.takenMu.Lock()
	defer r.takenMu.Unlock()
	return r.taken[by]
}

// tenantRelevance is a tenant's, in memory.
type tenantRelevance struct {
	mu       sync.Mutex
	recent   []store.SeenDiscover
	families []*family
}

// family is what one family of queries learned of each tool.
type family struct {
	key   string   // its words, sorted, space-separated
	terms []string // the same, split
	tools map[string]gained
}

type gained struct {
	gain float64
	at   time.Time
}

// decayed is g's gain at now.
func (g gained) decayed(now time.Time) float64 {
	return g.gain * math.Pow(0.5, float64(now.Sub(g.at))/float64(relevanceHalfLife))
}

// familyKey is the words of a family as the store keeps them, at most
// store.MaxFamilyBytes (words past it are left out).
func familyKey(terms []string) string {
	var b strings.Builder
	for _, t := range terms {
		if b.Len()+len(t)+1 > store.MaxFamilyBytes {
			break
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(t)
	}
	return b.String()
}

// discovered notes a discover of query by who that showed shown.
func (r *relevance) discovered(scope store.Scope, who, query string, shown []string) {
	terms := tools.Terms(query)
	if len(terms) == 0 {
		return
	}
	d := store.SeenDiscover{Caller: who, Family: familyKey(terms), Shown: slices.Clone(shown[:min(len(shown), store.MaxShown)]), At: r.now()}
	if r.store != nil {
		r.later(func(ctx context.Context) {
			r.setTaken(seenBy{scope, who}, false)
			if err := r.store.AddSeenDiscover(ctx, scope, d); err != nil {
				r.log.Warn("learning: noting a discover", "err", err)
			}
		})
		return
	}
	t := r.mem.Add(scope, &tenantRelevance{}, 1)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.recent = slices.DeleteFunc(t.recent, func(s store.SeenDiscover) bool { return d.At.Sub(s.At) > feedbackWindow })
	if len(t.recent) >= store.MaxSeenDiscovers {
		t.recent = t.recent[1:]
	}
	t.recent = append(t.recent, d)
}

// used learns from a run of who that called used: each discover of who
// in the window before it gains its family the tools called, and loses it
// some of those shown and not called. A discover teaches once.
func (r *relevance) used(scope store.Scope, who string, used []string) {
	if len(used) == 0 {
		return
	}
	now := r.now()
	if r.store != nil {
		r.later(func(ctx context.Context) {
			if err := r.learnStored(ctx, scope, who, used, now); err != nil {
				r.log.Warn("learning: learning from a run after a discover", "err", err)
			}
		})
		return
	}
	t, ok := r.mem.Get(scope)
	if !ok {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	kept := t.recent[:0]
	for _, d := range t.recent {
		switch {
		case now.Sub(d.At) > feedbackWindow:
		case d.Caller != who:
			kept = append(kept, d)
		default:
			learn(&t.families, d, used, now)
		}
	}
	clear(t.recent[len(kept):])
	t.recent = kept
	if n := len(t.families) - maxFamilies; n > 0 {
		slices.SortStableFunc(t.families, func(a, b *family) int { return latest(b).Compare(latest(a)) })
		t.families = t.families[:maxFamilies]
	}
}

// learnStored is used with a store: it takes who's discovers since the
// window began, learns from them and writes what changed.
func (r *relevance) learnStored(ctx context.Context, scope store.Scope, who string, used []string, now time.Time) error {
	by := seenBy{scope, who}
	if r.own && r.isTaken(by) {
		return nil
	}
	seen, err := r.store.TakeSeenDiscovers(ctx, scope, who, now.Add(-feedbackWindow))
	if err != nil {
		return err
	}
	if r.own {
		r.setTaken(by, true)
	}
	if len(seen) == 0 {
		return nil
	}
	families, err := r.read(ctx, scope)
	if err != nil {
		return err
	}
	changed := map[[2]string]store.ToolRelevance{}
	for _, d := range seen {
		for _, row := range learn(&families, d, used, now) {
			changed[[2]string{row.Family, row.Tool}] = row
		}
	}
	rows := make([]store.ToolRelevance, 0, len(changed))
	for _, row := range changed {
		rows = append(rows, row)
	}
	if err := r.store.PutToolRelevance(ctx, scope, rows); err != nil {
		return err
	}
	r.cache.Put(scope, families, time.Now())
	return nil
}

// read is scope's families as the store has them.
func (r *relevance) read(ctx context.Context, scope store.Scope) ([]*family, error) {
	rows, err := r.store.ToolRelevance(ctx, scope)
	if err != nil {
		return nil, err
	}
	byKey := map[string]*family{}
	var out []*family
	for _, row := range rows {
		f := byKey[row.Family]
		if f == nil {
			f = &family{key: row.Family, terms: strings.Fields(row.Family), tools: map[string]gained{}}
			slices.Sort(f.terms)
			byKey[row.Family] = f
			out = append(out, f)
		}
		f.tools[row.Tool] = gained{row.Gain, row.UpdatedAt}
	}
	return out, nil
}

// learn adds what d and the calls that followed it teach to d's family in
// families (a new one when none is close enough), and returns the rows it
// changed (a Gain of 0: gone).
func learn(families *[]*family, d store.SeenDiscover, used []string, now time.Time) []store.ToolRelevance {
	terms := strings.Fields(d.Family)
	slices.Sort(terms)
	var f *family
	best := 0.0
	for _, c := range *families {
		if s := jaccard(terms, c.terms); s >= minFamily && s > best {
			f, best = c, s
		}
	}
	if f == nil {
		f = &family{key: d.Family, terms: terms, tools: map[string]gained{}}
		*families = append(*families, f)
	}
	var rows []store.ToolRelevance
	set := func(tool string, g float64) {
		if g < minGain {
			delete(f.tools, tool)
			g = 0
		} else {
			f.tools[tool] = gained{g, now}
		}
		rows = append(rows, store.ToolRelevance{Family: f.key, Tool: tool, Gain: g, UpdatedAt: now})
	}
	for _, tool := range used {
		if g, ok := f.tools[tool]; ok || len(f.tools) < maxFamilyTools {
			set(tool, min(maxGain, g.decayed(now)+1))
		}
	}
	for _, tool := range d.Shown {
		if g, ok := f.tools[tool]; ok && !slices.Contains(used, tool) {
			set(tool, g.decayed(now)-unusedLoss)
		}
	}
	return rows
}

// latest is when f last changed.
func latest(f *family) time.Time {
	var t time.Time
	for _, g := range f.tools {
		if g.at.After(t) {
			t = g.at
		}
	}
	return t
}

// families is scope's learned families, nil when none or the store fails
// (discover then ranks without them).
func (r *relevance) families(ctx context.Context, scope store.Scope) []*family {
	if r.store == nil {
		t, ok := r.mem.Get(scope)
		if !ok {
			return nil
		}
		t.mu.Lock()
		defer t.mu.Unlock()
		out := make([]*family, len(t.families))
		for i, f := range t.families {
			out[i] = &family{key: f.key, terms: f.terms, tools: maps.Clone(f.tools)}
		}
		return out
	}
	now := time.Now()
	if f, ok := r.cache.Get(scope, now); ok {
		return f
	}
	f, err := r.read(ctx, scope)
	if err != nil {
		return nil
	}
	r.cache.Put(scope, f, now)
	return f
}

// boost is what query's family learned of each tool, in (0, 1]: the gain,
// decayed by age, over fullGain, times how close query is to the family.
func (r *relevance) boost(ctx context.Context, scope store.Scope, query string) map[string]float64 {
	terms := tools.Terms(query)
	if len(terms) == 0 {
		return nil
	}
	families := r.families(ctx, scope)
	now := r.now()
	var out map[string]float64
	for _, f := range families {
		sim := jaccard(terms, f.terms)
		if sim < minFamily {
			continue
		}
		for tool, g := range f.tools {
			b := min(1, sim*g.decayed(now)/fullGain)
			if b < minGain/fullGain {
				continue
			}
			if out == nil {
				out = map[string]float64{}
			}
			out[tool] = max(out[tool], b)
		}
	}
	return out
}

// jaccard is the share of words two sorted sets of words share.
func jaccard(a, b []string) float64 {
	var shared int
	for _, w := range a {
		if _, ok := slices.BinarySearch(b, w); ok {
			shared++
		}
	}
	union := len(a) + len(b) - shared
	if union == 0 {
		return 0
	}
	return float64(shared) / float64(union)
}
