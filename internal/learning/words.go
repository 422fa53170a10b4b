package learning

import (
	"cmp"
	"context"
	"math"
	"slices"
	"strings"
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
// later discover ranks each tool with the words it learned as a field of its
// document (tools.Info.Learned), so a task worded the way users word it
// finds the tools such tasks used, whatever their descriptions say:
// document expansion from use.
const (
	wordsHalfLife = 30 * 24 * time.Hour
	// maxRunWords and maxRunTools bound what one run teaches.
	maxRunWords = 40
	maxRunTools = 16
	// queryWordWeight is what a word of the discover before the run counts,
	// a word of its intent counting 1: the query was the AI's guess.
	queryWordWeight = 0.5
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
	// flag names the sanitizer rule a word breaks ("" none, nil: no
	// sanitizer): such a word stays its tenant's.
	flag func(string) string
}

type callerKey struct {
	scope store.Scope
	who   string
}

type seenQuery struct {
	terms []string
	at    time.Time
}

func newWords(st store.Store, later func(func(context.Context)) bool, now func() time.Time, g *global, onShared func(), flag func(string) string) *words {
	return &words{store: st, later: later, now: now, global: g, onShared: onShared, flag: flag,
		cache:   ttlcache.New[store.Scope, *wordIndex](graphCacheTTL, graphCacheSize),
		queries: lru.New[callerKey, seenQuery](maxWordCallers, maxWordCallers)}
}

// wordIndex is learned words as discover reads them: for each word, the
// tools that learned it and how much.
type wordIndex struct {
	byWord map[string][]toolWeight
	tools  int               // distinct tools
	texts  map[string]string // each tool's learned text (finish)
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

// finish counts the distinct tools and writes each one's learned text:
// its words, most taught first, each said as often as it was taught (at
// most maxWordRepeat times, a lesson decayed or scaled below one once), at
// most maxToolWords words.
func (x *wordIndex) finish() *wordIndex {
	byTool := map[string][]toolWeight{} // here tool holds the word
	for word, list := range x.byWord {
		for _, tw := range list {
			byTool[tw.tool] = append(byTool[tw.tool], toolWeight{word, tw.weight})
		}
	}
	x.tools = len(byTool)
	x.texts = make(map[string]string, len(byTool))
	for tool, words := range byTool {
		// A word taught of few tools says more of each than one taught of
		// every tool ("hey", "need"): the words kept are the most taught
		// by that measure.
		spec := func(w toolWeight) float64 {
			return w.weight * math.Log(1+float64(x.tools)/float64(len(x.byWord[w.tool])))
		}
		slices.SortFunc(words, func(a, b toolWeight) int {
			return cmp.Or(cmp.Compare(spec(b), spec(a)), strings.Compare(a.tool, b.tool))
		})
		var b strings.Builder
		for _, w := range words[:min(len(words), maxToolWords)] {
			for range max(1, min(maxWordRepeat, int(math.Round(w.weight)))) {
				b.WriteString(w.tool)
				b.WriteByte(' ')
			}
		}
		x.texts[tool] = b.String()
	}
	return x
}

// Bounds of a tool's learned text.
const (
	maxToolWords  = 256
	maxWordRepeat = 3
)

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
	// The longest words first: past maxRunWords, the short common ones go.
	slices.SortStableFunc(terms, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	terms = terms[:min(len(terms), maxRunWords)]
	for _, tool := range used[:min(len(used), maxRunTools)] {
		if len(tool) > store.MaxToolIDBytes {
			continue
		}
		for _, t := range terms {
			shared := w.global.shares(scope, tool) && shareable(t) && (w.flag == nil || w.flag(t) == "")
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
