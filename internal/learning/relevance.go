package learning

import (
	"math"
	"slices"
	"sync"
	"time"

	"github.com/pml-go/pml/internal/lru"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/tools"
)

// Learning from use (docs/how-it-works.md "Discover and the tool graph"):
// a discover followed, by the same caller within feedbackWindow, by a run
// that calls tools teaches the tenant that the query's family (queries of
// mostly the same words) leads to those tools; a tool the discover showed
// and the run did not call loses some of what it had. A later discover of
// the family lifts the tools by what they gained, decayed by age; a query
// of another family is not moved. It is kept in memory, bounded, per
// process: the signal is of the last days, rebuilt by use after a restart.
const (
	feedbackWindow    = 15 * time.Minute
	relevanceHalfLife = 7 * 24 * time.Hour
	// minFamily is the share of words two queries must share (Jaccard) to
	// be of one family.
	minFamily = 0.5
	// maxGain caps what one tool gains for one family; unusedLoss is what
	// a tool shown and not called loses.
	maxGain    = 4.0
	unusedLoss = 0.25
	// fullGain is the gain of a tool whose boost is full: two uses.
	fullGain = 2.0
	// shownTools are the first hits of a discover taken as shown: a
	// package asks for many and shows fewer.
	shownTools = 10

	maxRelevanceTenants = 1024
	maxRecentDiscovers  = 16
	maxFamilies         = 256
	maxFamilyTools      = 16
)

// relevance is every tenant's learned relevance.
type relevance struct {
	tenants *lru.Cache[store.Scope, *tenantRelevance]
	now     func() time.Time
}

func newRelevance(now func() time.Time) *relevance {
	return &relevance{tenants: lru.New[store.Scope, *tenantRelevance](maxRelevanceTenants, maxRelevanceTenants), now: now}
}

type tenantRelevance struct {
	mu       sync.Mutex
	recent   []seenDiscover
	families []*family
}

// seenDiscover is a discover waiting for the calls that follow it.
type seenDiscover struct {
	who   string
	terms []string
	shown []string
	at    time.Time
}

// family is what one family of queries led to.
type family struct {
	terms []string
	gain  map[string]float64
	at    time.Time // of the last change
}

func (r *relevance) tenant(scope store.Scope, create bool) *tenantRelevance {
	if t, ok := r.tenants.Get(scope); ok || !create {
		return t
	}
	return r.tenants.Add(scope, &tenantRelevance{}, 1)
}

// discovered notes a discover of query by who that showed shown.
func (r *relevance) discovered(scope store.Scope, who, query string, shown []string) {
	terms := tools.Terms(query)
	if len(terms) == 0 {
		return
	}
	t := r.tenant(scope, true)
	now := r.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.recent = slices.DeleteFunc(t.recent, func(d seenDiscover) bool { return now.Sub(d.at) > feedbackWindow })
	if len(t.recent) >= maxRecentDiscovers {
		t.recent = t.recent[1:]
	}
	t.recent = append(t.recent, seenDiscover{who: who, terms: terms, shown: slices.Clone(shown[:min(len(shown), shownTools)]), at: now})
}

// used learns from a run of who that called used: each discover of who
// in the window before it gains its family the tools called, and loses it
// some of those shown and not called. A discover teaches once.
func (r *relevance) used(scope store.Scope, who string, used []string) {
	if len(used) == 0 {
		return
	}
	t := r.tenant(scope, false)
	if t == nil {
		return
	}
	now := r.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	kept := t.recent[:0]
	for _, d := range t.recent {
		switch {
		case now.Sub(d.at) > feedbackWindow:
		case d.who != who:
			kept = append(kept, d)
		default:
			t.learn(d, used, now)
		}
	}
	clear(t.recent[len(kept):])
	t.recent = kept
}

// learn adds what d and the calls that followed it teach to d's family.
func (t *tenantRelevance) learn(d seenDiscover, used []string, now time.Time) {
	f := t.family(d.terms, now)
	decay(f, now)
	for _, tool := range used {
		if _, ok := f.gain[tool]; ok || len(f.gain) < maxFamilyTools {
			f.gain[tool] = min(maxGain, f.gain[tool]+1)
		}
	}
	for _, tool := range d.shown {
		if g, ok := f.gain[tool]; ok && !slices.Contains(used, tool) {
			if g -= unusedLoss; g > 0 {
				f.gain[tool] = g
			} else {
				delete(f.gain, tool)
			}
		}
	}
	f.at = now
}

// family returns the family of terms, a new one when none is close enough
// (the least recently changed one gives way past maxFamilies).
func (t *tenantRelevance) family(terms []string, now time.Time) *family {
	best, sim := -1, 0.0
	for i, f := range t.families {
		if s := jaccard(terms, f.terms); s > sim {
			best, sim = i, s
		}
	}
	if best >= 0 && sim >= minFamily {
		return t.families[best]
	}
	if len(t.families) >= maxFamilies {
		oldest := 0
		for i, f := range t.families {
			if f.at.Before(t.families[oldest].at) {
				oldest = i
			}
		}
		t.families = slices.Delete(t.families, oldest, oldest+1)
	}
	f := &family{terms: terms, gain: map[string]float64{}, at: now}
	t.families = append(t.families, f)
	return f
}

// boost is what query's family learned of each tool, in (0, 1]: the gain,
// decayed by age, over fullGain, times how close query is to the family.
func (r *relevance) boost(scope store.Scope, query string) map[string]float64 {
	t := r.tenant(scope, false)
	if t == nil {
		return nil
	}
	terms := tools.Terms(query)
	if len(terms) == 0 {
		return nil
	}
	now := r.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	var out map[string]float64
	for _, f := range t.families {
		sim := jaccard(terms, f.terms)
		if sim < minFamily {
			continue
		}
		age := math.Pow(0.5, float64(now.Sub(f.at))/float64(relevanceHalfLife))
		for tool, g := range f.gain {
			if out == nil {
				out = map[string]float64{}
			}
			out[tool] = min(1, max(out[tool], sim*age*g/fullGain))
		}
	}
	return out
}

// decay ages f's gains to now.
func decay(f *family, now time.Time) {
	age := math.Pow(0.5, float64(now.Sub(f.at))/float64(relevanceHalfLife))
	for tool, g := range f.gain {
		if g *= age; g < 0.05 {
			delete(f.gain, tool)
		} else {
			f.gain[tool] = g
		}
	}
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
