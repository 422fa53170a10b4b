package learning

import (
	"context"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pml-go/pml/internal/lru"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/tools"
	"github.com/pml-go/pml/internal/ttlcache"
)

// What runs teach discover (docs/how-it-works.md "Discover and the tool
// graph"): the words of a successful run's intent, and of the discover that
// led to it in the caller's session, become words of each tool the run
// used, for the tenant at once, and, through the global layer, for every
// tenant once K distinct orgs taught the same word of the same tool. A
// later discover whose words a tool learned lifts it (WordBoost), so a task
// worded the way users word it finds the tools such tasks used, whatever
// their descriptions say: document expansion from use.
const (
	wordsHalfLife = 30 * 24 * time.Hour
	// maxRunWords and maxRunTools bound what one run teaches.
	maxRunWords = 24
	maxRunTools = 16
	// queryWordWeight is what a word of the discover before the run counts,
	// a word of its intent counting 1: the query was the AI's guess.
	queryWordWeight = 0.5
	// wordConfidence is the share of a query's weight (its words by how
	// rare they are) a tool's learned words must say for the full boost.
	wordConfidence = 0.25
	// minShareBytes and maxShareBytes bound a word the global layer takes:
	// letters only, so no path, address, number or identifier crosses.
	minShareBytes = 3
	maxShareBytes = 20
	// maxWordCallers bounds the callers whose last discover is kept.
	maxWordCallers = 4096
)

// words is every tenant's learned words of tools.
type words struct {
	store  store.Store
	later  func(func(context.Context)) bool
	now    func() time.Time
	global *global
	cache  *ttlcache.Cache[store.Scope, *wordIndex]
	// queries are each caller's last discover, for the run that follows.
	queries *lru.Cache[callerKey, seenQuery]
	mu      sync.Mutex // a tenant's index, rebuilt once at a time
	// shared says rows counting toward the global layer were written
	// since the last flush, which then reads the layer again; onShared
	// schedules that flush.
	shared   atomic.Bool
	onShared func()
}

type callerKey struct {
	scope store.Scope
	who   string
}

type seenQuery struct {
	terms []string
	at    time.Time
}

func newWords(st store.Store, later func(func(context.Context)) bool, now func() time.Time, g *global, onShared func()) *words {
	return &words{store: st, later: later, now: now, global: g, onShared: onShared,
		cache:   ttlcache.New[store.Scope, *wordIndex](graphCacheTTL, graphCacheSize),
		queries: lru.New[callerKey, seenQuery](maxWordCallers, maxWordCallers)}
}

// wordIndex is learned words as discover reads them: for each word, the
// tools that learned it and how much.
type wordIndex struct {
	byWord map[string][]toolWeight
	tools  int // distinct tools
}

type toolWeight struct {
	tool   string
	weight float64
}

func newWordIndex() *wordIndex { return &wordIndex{byWord: map[string][]toolWeight{}} }

// add adds weight to the word of tool.
func (x *wordIndex) add(tool, word string, weight float64) {
	list := x.byWord[word]
	if i := slices.IndexFunc(list, func(tw toolWeight) bool { return tw.tool == tool }); i >= 0 {
		list[i].weight += weight
		return
	}
	x.byWord[word] = append(list, toolWeight{tool, weight})
}

// finish counts the distinct tools.
func (x *wordIndex) finish() *wordIndex {
	seen := map[string]bool{}
	for _, list := range x.byWord {
		for _, tw := range list {
			seen[tw.tool] = true
		}
	}
	x.tools = len(seen)
	return x
}

// noteQuery keeps who's last discover, for the run that follows it.
func (w *words) noteQuery(scope store.Scope, who, query string) {
	if terms := tools.Terms(query); len(terms) > 0 {
		w.queries.Add(callerKey{scope, who}, seenQuery{terms, w.now()}, 1)
	}
}

// learn teaches scope that the words of intent, and of who's discover
// within feedbackWindow before, are words of each tool used. It writes
// after the answer.
func (w *words) learn(scope store.Scope, who, intent string, used []string) {
	if w.store == nil || len(used) == 0 {
		return
	}
	weights := map[string]float64{}
	for _, t := range tools.Terms(intent) {
		weights[t] = 1
	}
	if q, ok := w.queries.Get(callerKey{scope, who}); ok && w.now().Sub(q.at) <= feedbackWindow {
		for _, t := range q.terms {
			weights[t] = max(weights[t], queryWordWeight)
		}
	}
	var rows []store.ToolWord
	anyShared := false
	terms := slices.Sorted(func(yield func(string) bool) {
		for t := range weights {
			if len(t) <= store.MaxWordBytes && !yield(t) {
				return
			}
		}
	})
	terms = terms[:min(len(terms), maxRunWords)]
	for _, tool := range used[:min(len(used), maxRunTools)] {
		if len(tool) > store.MaxToolIDBytes {
			continue
		}
		for _, t := range terms {
			shared := w.global.shares(scope, tool) && shareable(t)
			anyShared = anyShared || shared
			rows = append(rows, store.ToolWord{Tool: tool, Word: t, Weight: weights[t], Shared: shared})
		}
	}
	if len(rows) == 0 {
		return
	}
	w.later(func(ctx context.Context) {
		if err := w.store.AddToolWords(ctx, scope, rows); err != nil {
			return
		}
		w.cache.Delete(scope) // read again, with the new words, at the next discover
		if anyShared {
			w.shared.Store(true)
			w.onShared()
		}
	})
}

// shareable reports whether a word may cross to other tenants: a word of
// letters that a dictionary could hold, not a path, number or identifier.
func shareable(word string) bool {
	if len(word) < minShareBytes || len(word) > maxShareBytes {
		return false
	}
	for _, r := range word {
		if r < 'a' || r > 'z' {
			return false
		}
	}
	return true
}

// index is scope's learned words, decayed, from a cache.
func (w *words) index(ctx context.Context, scope store.Scope) *wordIndex {
	if w.store == nil {
		return nil
	}
	now := time.Now()
	if x, ok := w.cache.Get(scope, now); ok {
		return x
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if x, ok := w.cache.Get(scope, now); ok {
		return x
	}
	rows, err := w.store.ToolWords(ctx, scope)
	if err != nil {
		return nil
	}
	x := newWordIndex()
	for _, r := range rows {
		x.add(r.Tool, r.Word, r.Weight*math.Pow(0.5, float64(w.now().Sub(r.UpdatedAt))/float64(wordsHalfLife)))
	}
	x.finish()
	w.cache.Put(scope, x, now)
	return x
}

// wordBoost is what the learned words say of each tool for query, in
// (0, 1]: BM25 over each tool's learned words as a document (a word's
// frequency its weight, saturated, a tool taught by many tasks discounted
// by its length), the best tool 1 when its words say at least
// wordConfidence of the query's weight, the others in proportion. own is
// the tenant's words; global, the global layer's, counts K orgs' lesson as
// one.
func wordBoost(query string, own, global *wordIndex, k int) map[string]float64 {
	terms := tools.Terms(query)
	if len(terms) == 0 || (own == nil || len(own.byWord) == 0) && (global == nil || len(global.byWord) == 0) {
		return nil
	}
	// Each tool's learned weight of each query term, and its whole weight.
	tf := map[string]map[string]float64{}
	length := map[string]float64{}
	for _, x := range []*wordIndex{own, global} {
		if x == nil {
			continue
		}
		scale := 1.0
		if x == global {
			scale = 1 / float64(max(k, 1))
		}
		for word, list := range x.byWord {
			for _, tw := range list {
				length[tw.tool] += tw.weight * scale
				if slices.Contains(terms, word) {
					if tf[word] == nil {
						tf[word] = map[string]float64{}
					}
					tf[word][tw.tool] += tw.weight * scale
				}
			}
		}
	}
	n := float64(len(length))
	var avg float64
	for _, l := range length {
		avg += l
	}
	avg /= max(n, 1)
	score := map[string]float64{}
	var total float64
	for _, t := range terms {
		idf := math.Log(1 + (n-float64(len(tf[t]))+0.5)/(float64(len(tf[t]))+0.5))
		total += idf
		for tool, f := range tf[t] {
			score[tool] += idf * f * (wordK1 + 1) / (f + wordK1*(1-wordB+wordB*length[tool]/max(avg, 1e-9)))
		}
	}
	if total == 0 || len(score) == 0 {
		return nil
	}
	best := 0.0
	for _, v := range score {
		best = max(best, v)
	}
	scale := min(1, best/total/wordConfidence) / best
	for tool := range score {
		score[tool] *= scale
	}
	return score
}

// BM25's parameters over learned words.
const (
	wordK1 = 1.2
	wordB  = 0.75
)
