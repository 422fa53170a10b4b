package learning

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"sync"

	"github.com/pml-go/pml/internal/outputtype"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/tracing"
	"github.com/pml-go/pml/internal/ttlcache"
)

// Tool output types (docs/how-it-works.md "The global layer"): the types a
// tool's successful calls returned, inferred from the results traces
// carry (already sanitized), for tools that declare no output schema. Types
// only: no value, and no object key that looks taken from data, so the
// same schema can cross tenants under the k rule.
const (
	// maxTypedTools bounds the tools of one trace whose results are typed,
	// each from its first successful result.
	maxTypedTools = maxTraceTools
	// maxTypedResult bounds the result typed: a larger one was cut by the
	// trace's bounds anyway.
	maxTypedResult = tracing.MaxValueBytes
	// maxTypedElements bounds the array elements and map values typed.
	maxTypedElements = 64
	// maxPendingTypes bounds the tenants' tool types waiting to be written.
	maxPendingTypes = 4096
)

// typedResult is one successful call's result, to type after the answer.
type typedResult struct {
	tool   string
	result json.RawMessage
}

// resultsOf picks a trace's results to type: the first successful one of
// each tool, at most maxTypedTools.
func resultsOf(t tracing.Trace) []typedResult {
	var out []typedResult
	for _, task := range t.Tasks {
		if len(out) >= maxTypedTools {
			break
		}
		if !task.Success || len(task.Result) == 0 || len(task.Result) > maxTypedResult || !graphTool(task.ToolID) ||
			slices.ContainsFunc(out, func(r typedResult) bool { return r.tool == task.ToolID }) {
			continue
		}
		out = append(out, typedResult{task.ToolID, task.Result})
	}
	return out
}

// ToolOutputSchema types one result of a tool (outputtype.Of: types only,
// an object keyed by data a map, flag the sanitizer's rules), within
// store.MaxToolTypeBytes; nil for a value a trace's bounds cut short.
func ToolOutputSchema(result json.RawMessage, flag func(string) string) json.RawMessage {
	return outputtype.Bound(outputtype.Decode(outputtype.Of(result, flag)), store.MaxToolTypeBytes)
}

// orgSchema is one org's schema of a tool, as the global layer merges them.
type orgSchema struct {
	org string
	s   schema
}

// globalType merges the orgs' schemas of one tool under the k rule: a
// property is kept only when at least k distinct orgs' schemas have it
// (each merged the same way, a level down); every other value, and the
// values of maps, are typed together as additionalProperties, so no key
// fewer than k orgs saw is shown. Types are united.
func globalType(cs []orgSchema, k int) schema {
	out := schema{}
	var union []string
	byKey := map[string][]orgSchema{}
	var rest, items []orgSchema
	for _, c := range cs {
		union = outputtype.UnionTypes(union, outputtype.Types(c.s))
		for key, p := range outputtype.ObjectOf(c.s["properties"]) {
			if ps := outputtype.ObjectOf(p); ps != nil {
				byKey[key] = append(byKey[key], orgSchema{c.org, ps})
			}
		}
		if m := outputtype.ObjectOf(c.s["additionalProperties"]); m != nil {
			rest = append(rest, orgSchema{c.org, m})
		}
		if it := outputtype.ObjectOf(c.s["items"]); it != nil {
			items = append(items, orgSchema{c.org, it})
		}
	}
	outputtype.SetTypes(out, union)
	keys := slices.Sorted(maps.Keys(byKey))
	orgs := make(map[string]int, len(keys))
	for _, key := range keys {
		orgs[key] = distinctOrgs(byKey[key])
	}
	slices.SortStableFunc(keys, func(a, b string) int { return cmp.Compare(orgs[b], orgs[a]) })
	props := schema{}
	for _, key := range keys {
		if orgs[key] >= k && len(props) < outputtype.MaxProps {
			props[key] = globalType(byKey[key], k)
		} else {
			rest = append(rest, byKey[key]...)
		}
	}
	if len(props) > 0 {
		out["properties"] = props
	}
	if len(rest) > 0 {
		out["additionalProperties"] = globalType(rest, k)
	}
	if len(items) > 0 {
		out["items"] = globalType(items, k)
	}
	return out
}

func distinctOrgs(cs []orgSchema) int {
	seen := map[string]bool{}
	for _, c := range cs {
		seen[c.org] = true
	}
	return len(seen)
}

// toolTypes holds the tenants' tool types: merged results waiting to be
// written, and each tenant's types read back, for a short while.
type toolTypes struct {
	store   store.Store
	flag    func(string) string // the sanitizer's rules, for keys (outputtype.Of)
	cache   *ttlcache.Cache[store.Scope, map[string]json.RawMessage]
	mu      sync.Mutex
	pending map[store.Scope]map[string]schema
	count   int
	// seen counts the results typed per tenant and tool since the last
	// flush: past maxTypedPerFlush a tool's results wait for the next one.
	seen map[typedKey]int
}

type typedKey struct {
	scope store.Scope
	tool  string
}

// maxTypedPerFlush bounds the results of one tenant's tool typed between
// two flushes: the same code run a thousand times returns the same shape,
// and a result of another shape is typed in a later interval.
const maxTypedPerFlush = 8

// wanted keeps of results those whose tool still takes results before the
// next flush, counting them.
func (tt *toolTypes) wanted(scope store.Scope, results []typedResult) []typedResult {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	out := results[:0:0]
	for _, r := range results {
		k := typedKey{scope, r.tool}
		if tt.seen[k] >= maxTypedPerFlush || len(tt.seen) >= maxPendingTypes && tt.seen[k] == 0 {
			continue
		}
		tt.seen[k]++
		out = append(out, r)
	}
	return out
}

func newToolTypes(st store.Store, flag func(string) string) *toolTypes {
	return &toolTypes{store: st, flag: flag, cache: ttlcache.New[store.Scope, map[string]json.RawMessage](graphCacheTTL, graphCacheSize),
		pending: map[store.Scope]map[string]schema{}, seen: map[typedKey]int{}}
}

// observe types results of scope's calls into the pending types.
func (tt *toolTypes) observe(scope store.Scope, results []typedResult) {
	typed := make([]schema, len(results))
	for i, r := range results {
		// By shape alone here, for every trace; the sanitizer's rules are
		// applied once per tool and flush.
		typed[i] = outputtype.Decode(ToolOutputSchema(r.result, nil))
	}
	tt.mu.Lock()
	defer tt.mu.Unlock()
	for i, r := range results {
		if typed[i] == nil {
			continue
		}
		p, ok := tt.pending[scope]
		if !ok {
			p = map[string]schema{}
			tt.pending[scope] = p
		}
		have, ok := p[r.tool]
		if !ok && tt.count >= maxPendingTypes {
			return
		}
		if !ok {
			tt.count++
		}
		p[r.tool] = outputtype.MergeTypes(have, typed[i])
	}
}

// flush merges the pending types into each tenant's stored ones and
// writes them, one transaction per tenant; shared says which it
// contributes to the global layer. It reports whether it wrote any.
func (tt *toolTypes) flush(ctx context.Context, shared func(store.Scope, string) bool) (bool, error) {
	tt.mu.Lock()
	pending := tt.pending
	tt.pending, tt.count, tt.seen = map[store.Scope]map[string]schema{}, 0, map[typedKey]int{}
	tt.mu.Unlock()
	var errs []error
	for scope, p := range pending {
		stored, err := tt.store.ToolTypes(ctx, scope)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		old := make(map[string]schema, len(stored))
		for _, t := range stored {
			old[t.Tool] = outputtype.Decode(t.Schema)
		}
		batch := make([]store.ToolType, 0, len(p))
		for tool, s := range p {
			merged := outputtype.Decode(outputtype.Clean(outputtype.Encode(outputtype.MergeTypes(old[tool], s)), tt.flag))
			if b := outputtype.Bound(merged, store.MaxToolTypeBytes); b != nil {
				batch = append(batch, store.ToolType{Tool: tool, Schema: b, Shared: shared(scope, tool)})
			}
		}
		for start := 0; start < len(batch); start += store.MaxToolTypes {
			errs = append(errs, tt.store.PutToolTypes(ctx, scope, batch[start:min(start+store.MaxToolTypes, len(batch))]))
		}
	}
	return len(pending) > 0, errors.Join(errs...)
}

// get is scope's tool types by tool, nil when it has none or the store
// fails (discover then shows no inferred type).
func (tt *toolTypes) get(ctx context.Context, scope store.Scope) map[string]json.RawMessage {
	if tt.store == nil {
		return nil
	}
	return cached(ctx, tt.cache, scope, func(ctx context.Context) (map[string]json.RawMessage, error) {
		stored, err := tt.store.ToolTypes(ctx, scope)
		m := make(map[string]json.RawMessage, len(stored))
		for _, t := range stored {
			m[t.Tool] = t.Schema
		}
		return m, err
	})
}
