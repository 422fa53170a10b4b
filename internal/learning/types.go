package learning

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

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

// ToolOutputSchema types one result of a tool: typeOf's types to
// maxOutputDepth, except that an object keyed by data (a key that looks
// like a number, a date, a file name or path, an e-mail, a URL, an id or
// text, or more keys than an object keeps) is a map,
// {"type":"object","additionalProperties": the union of its values'
// types}. A value the trace's bounds cut short ({"_truncated": true, …})
// has no type: nil.
func ToolOutputSchema(result json.RawMessage) json.RawMessage {
	var v any
	if json.Unmarshal(result, &v) != nil {
		return nil
	}
	if m, ok := v.(map[string]any); ok && m["_truncated"] == true {
		return nil
	}
	return boundedSchema(toolTypeOf(v, maxOutputDepth))
}

func toolTypeOf(v any, depth int) schema {
	switch x := v.(type) {
	case []any:
		s := schema{"type": "array"}
		if depth <= 1 || len(x) == 0 {
			return s
		}
		var items schema
		for _, el := range x[:min(len(x), maxTypedElements)] {
			items = mergeTool(items, toolTypeOf(el, depth-1))
		}
		s["items"] = items
		return s
	case map[string]any:
		s := schema{"type": "object"}
		if depth <= 1 || len(x) == 0 {
			return s
		}
		keys := sortedKeys(x)
		if len(keys) > maxOutputProps || slices.ContainsFunc(keys, dataKey) {
			var values schema
			for _, k := range keys[:min(len(keys), maxTypedElements)] {
				values = mergeTool(values, toolTypeOf(x[k], depth-1))
			}
			s["additionalProperties"] = values
			return s
		}
		props := schema{}
		for _, k := range keys {
			props[k] = toolTypeOf(x[k], depth-1)
		}
		s["properties"] = props
		return s
	}
	return typeOf(v, depth)
}

// dataKey reports whether an object key looks taken from data rather than
// named by the tool's author: empty or long, starting with a digit
// (numbers, dates, many ids), holding '@', '/', '\', ':', '.' or a space
// (e-mails, paths, URLs, file names, times, text), four digits or more, or
// eight hex digits or more with a digit among them (hashes, UUIDs).
func dataKey(k string) bool {
	if k == "" || len(k) > 64 || k[0] >= '0' && k[0] <= '9' || strings.ContainsAny(k, "@/\\:. \t\r\n") {
		return true
	}
	digits, hex := 0, 0
	for _, c := range k {
		switch {
		case c >= '0' && c <= '9':
			digits++
			hex++
		case c >= 'a' && c <= 'f', c >= 'A' && c <= 'F':
			hex++
		case c == '-' || c == '_':
		default:
			hex = -len(k) // not a hex id
		}
	}
	return digits >= 4 || hex >= 8 && digits > 0
}

// mergeTool widens a to also describe b, as the results of one tenant's
// calls differ: types are united; objects whose keys differ more than they
// agree (fewer keys shared than not), or that are maps already, become a
// map of every value's type; arrays unite their items. nil is no schema.
func mergeTool(a, b schema) schema {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	out := schema{}
	setTypes(out, unionTypes(types(a), types(b)))
	pa, pb := objectOf(a["properties"]), objectOf(b["properties"])
	ma, mb := objectOf(a["additionalProperties"]), objectOf(b["additionalProperties"])
	switch {
	case ma != nil || mb != nil || keysApart(pa, pb):
		values := mergeTool(ma, mb)
		for _, p := range []schema{pa, pb} {
			for _, k := range sortedKeys(p) {
				values = mergeTool(values, objectOf(p[k]))
			}
		}
		if values != nil {
			out["additionalProperties"] = values
		}
	case pa != nil || pb != nil:
		props := schema{}
		for k, v := range pa {
			props[k] = v
		}
		for k, v := range pb {
			props[k] = mergeTool(objectOf(props[k]), objectOf(v))
		}
		out["properties"] = props
	}
	if items := mergeTool(objectOf(a["items"]), objectOf(b["items"])); items != nil {
		out["items"] = items
	}
	return out
}

// keysApart reports whether two objects' keys differ enough to be data:
// more keys between them than an object keeps, or fewer shared than not.
func keysApart(pa, pb schema) bool {
	if len(pa) == 0 || len(pb) == 0 {
		return false
	}
	shared := 0
	for k := range pa {
		if _, ok := pb[k]; ok {
			shared++
		}
	}
	union := len(pa) + len(pb) - shared
	return union > maxOutputProps || 2*shared < union
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
		union = unionTypes(union, types(c.s))
		for key, p := range objectOf(c.s["properties"]) {
			if ps := objectOf(p); ps != nil {
				byKey[key] = append(byKey[key], orgSchema{c.org, ps})
			}
		}
		if m := objectOf(c.s["additionalProperties"]); m != nil {
			rest = append(rest, orgSchema{c.org, m})
		}
		if it := objectOf(c.s["items"]); it != nil {
			items = append(items, orgSchema{c.org, it})
		}
	}
	setTypes(out, union)
	keys := sortedKeys(byKey)
	orgs := make(map[string]int, len(keys))
	for _, key := range keys {
		orgs[key] = distinctOrgs(byKey[key])
	}
	slices.SortStableFunc(keys, func(a, b string) int { return cmp.Compare(orgs[b], orgs[a]) })
	props := schema{}
	for _, key := range keys {
		if orgs[key] >= k && len(props) < maxOutputProps {
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

// boundedSchema encodes s within store.MaxToolTypeBytes, cut to a lesser
// depth while it is larger; nil when not even its type fits.
func boundedSchema(s schema) json.RawMessage {
	if s == nil {
		return nil
	}
	for depth := maxOutputDepth; depth >= 1; depth-- {
		if b := encode(cutSchema(s, depth)); len(b) <= store.MaxToolTypeBytes {
			return b
		}
	}
	return nil
}

// cutSchema keeps of s its types, properties, items and
// additionalProperties, to depth.
func cutSchema(s schema, depth int) schema {
	out := schema{}
	setTypes(out, types(s))
	if depth <= 1 {
		return out
	}
	if props := objectOf(s["properties"]); props != nil {
		kept := schema{}
		for _, k := range sortedKeys(props) {
			if p := objectOf(props[k]); p != nil && len(kept) < maxOutputProps {
				kept[k] = cutSchema(p, depth-1)
			}
		}
		out["properties"] = kept
	}
	for _, field := range []string{"items", "additionalProperties"} {
		if sub := objectOf(s[field]); sub != nil {
			out[field] = cutSchema(sub, depth-1)
		}
	}
	return out
}

// toolTypes holds the tenants' tool types: merged results waiting to be
// written, and each tenant's types read back, for a short while.
type toolTypes struct {
	store   store.Store
	cache   *ttlcache.Cache[store.Scope, map[string]json.RawMessage]
	mu      sync.Mutex
	pending map[store.Scope]map[string]schema
	count   int
}

func newToolTypes(st store.Store) *toolTypes {
	return &toolTypes{store: st, cache: ttlcache.New[store.Scope, map[string]json.RawMessage](graphCacheTTL, graphCacheSize),
		pending: map[store.Scope]map[string]schema{}}
}

// observe types results of scope's calls into the pending types.
func (tt *toolTypes) observe(scope store.Scope, results []typedResult) {
	typed := make([]schema, len(results))
	for i, r := range results {
		typed[i] = decode(ToolOutputSchema(r.result))
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
		p[r.tool] = mergeTool(have, typed[i])
	}
}

// flush merges the pending types into each tenant's stored ones and
// writes them, one transaction per tenant; shared says which it
// contributes to the global layer. It reports whether it wrote any.
func (tt *toolTypes) flush(ctx context.Context, shared func(store.Scope, string) bool) (bool, error) {
	tt.mu.Lock()
	pending := tt.pending
	tt.pending, tt.count = map[store.Scope]map[string]schema{}, 0
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
			old[t.Tool] = decode(t.Schema)
		}
		batch := make([]store.ToolType, 0, len(p))
		for tool, s := range p {
			if b := boundedSchema(mergeTool(old[tool], s)); b != nil {
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
	now := time.Now()
	if m, ok := tt.cache.Get(scope, now); ok {
		return m
	}
	if tt.store == nil {
		return nil
	}
	stored, err := tt.store.ToolTypes(ctx, scope)
	if err != nil {
		return nil
	}
	m := make(map[string]json.RawMessage, len(stored))
	for _, t := range stored {
		m[t.Tool] = t.Schema
	}
	tt.cache.Put(scope, m, now)
	return m
}
