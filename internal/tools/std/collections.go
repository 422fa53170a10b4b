package std

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/pml-go/pml/internal/tools"
)

// Collections work on json.RawMessage elements so items come back exactly as
// they came in (key order, number precision).

const keyDoc = `A path into each item ("name", "user.id", "tags[0]"); the item itself when absent.`

func collectionTools() []tools.Func {
	return []tools.Func{
		tools.Typed(info("collections:sort",
			"Sort an array (stable): numbers numerically, strings by code point, mixed types as null < booleans < numbers < strings < arrays < objects. With key, items are compared by the value at that path.",
			`{"type":"object","properties":{
				"items":{"type":"array"},
				"key":{"type":"string","description":`+quote(keyDoc)+`},
				"descending":{"type":"boolean","default":false}
			},"required":["items"],"additionalProperties":false}`, returnsItems),
			sortItems),
		tools.Typed(info("collections:unique",
			"Remove duplicate items from an array, keeping the first of each; items are equal when their values (or their values at key) are deeply equal.",
			`{"type":"object","properties":{
				"items":{"type":"array"},
				"key":{"type":"string","description":`+quote(keyDoc)+`}
			},"required":["items"],"additionalProperties":false}`, returnsItems),
			uniqueItems),
		tools.Typed(info("collections:group_by",
			"Group array items into an object keyed by the value at key (strings as is, other values as JSON text, a missing key as \"undefined\"); groups keep item order and appear in first-seen order.",
			`{"type":"object","properties":{
				"items":{"type":"array"},
				"key":{"type":"string","description":"A path into each item, e.g. \"status\" or \"user.role\"."}
			},"required":["items","key"],"additionalProperties":false}`, `{"type":"object","additionalProperties":{"type":"array"}}`),
			groupBy),
		tools.Typed(info("collections:chunk",
			"Split an array into arrays of at most size items.",
			`{"type":"object","properties":{
				"items":{"type":"array"},
				"size":{"type":"integer","minimum":1}
			},"required":["items","size"],"additionalProperties":false}`, `{"type":"array","items":{"type":"array"}}`),
			func(_ context.Context, a struct {
				Items []json.RawMessage `json:"items"`
				Size  int               `json:"size"`
			}) (any, error) {
				out := [][]json.RawMessage{}
				for c := range slices.Chunk(a.Items, a.Size) {
					out = append(out, c)
				}
				return out, nil
			}),
		tools.Typed(info("collections:flatten",
			"Flatten nested arrays by depth levels (default 1), like Array.prototype.flat.",
			`{"type":"object","properties":{
				"items":{"type":"array"},
				"depth":{"type":"integer","minimum":0,"maximum":100,"default":1}
			},"required":["items"],"additionalProperties":false}`, returnsItems),
			func(_ context.Context, a struct {
				Items []json.RawMessage `json:"items"`
				Depth *int              `json:"depth"`
			}) (any, error) {
				depth := 1
				if a.Depth != nil {
					depth = *a.Depth
				}
				return flatten(a.Items, depth), nil
			}),
		tools.Typed(info("collections:pick",
			"Keep only the given keys of an object, or of each object in an array, in the order of keys; missing keys are left out.",
			`{"type":"object","properties":{
				"data":{"type":["object","array"],"description":"An object or an array of objects."},
				"keys":{"type":"array","items":{"type":"string"},"minItems":1}
			},"required":["data","keys"],"additionalProperties":false}`, `{"type":["object","array"],"items":{"type":"object"}}`),
			pick),
	}
}

type keyedItems struct {
	Items []json.RawMessage `json:"items"`
	Key   string            `json:"key"`
}

// keysOf returns each item's comparison value: the item, or its value at key
// (nil when missing).
func keysOf(items []json.RawMessage, key string) ([]json.RawMessage, error) {
	segs, err := parsePath(key)
	if err != nil {
		return nil, err
	}
	out := make([]json.RawMessage, len(items))
	for i, it := range items {
		if v, ok := lookup(it, segs); ok {
			out[i] = v
		}
	}
	return out, nil
}

func sortItems(_ context.Context, a struct {
	keyedItems
	Descending bool `json:"descending"`
}) (any, error) {
	keys, err := keysOf(a.Items, a.Key)
	if err != nil {
		return nil, err
	}
	type pair struct {
		item json.RawMessage
		key  any
	}
	pairs := make([]pair, len(a.Items))
	for i := range a.Items {
		pairs[i] = pair{a.Items[i], decodeValue(keys[i])}
	}
	slices.SortStableFunc(pairs, func(x, y pair) int {
		c := compareValues(x.key, y.key)
		if a.Descending {
			return -c
		}
		return c
	})
	out := make([]json.RawMessage, len(pairs))
	for i, p := range pairs {
		out[i] = p.item
	}
	return out, nil
}

func uniqueItems(_ context.Context, a keyedItems) (any, error) {
	keys, err := keysOf(a.Items, a.Key)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	out := []json.RawMessage{}
	for i, it := range a.Items {
		c := canonical(keys[i])
		if seen[c] {
			continue
		}
		seen[c] = true
		out = append(out, it)
	}
	return out, nil
}

func groupBy(_ context.Context, a keyedItems) (any, error) {
	keys, err := keysOf(a.Items, a.Key)
	if err != nil {
		return nil, err
	}
	var names []string
	groups := map[string][]json.RawMessage{}
	for i, it := range a.Items {
		name := "undefined"
		if keys[i] != nil {
			if err := json.Unmarshal(keys[i], &name); err != nil {
				name = canonical(keys[i])
			}
		}
		if _, ok := groups[name]; !ok {
			names = append(names, name)
		}
		groups[name] = append(groups[name], it)
	}
	var g orderedObject
	for _, n := range names {
		g.set(n, groups[n])
	}
	return g, nil
}

func flatten(items []json.RawMessage, depth int) []json.RawMessage {
	out := []json.RawMessage{}
	for _, it := range items {
		var inner []json.RawMessage
		if depth > 0 && json.Unmarshal(it, &inner) == nil {
			out = append(out, flatten(inner, depth-1)...)
			continue
		}
		out = append(out, it)
	}
	return out
}

func pick(_ context.Context, a struct {
	Data json.RawMessage `json:"data"`
	Keys []string        `json:"keys"`
}) (any, error) {
	pickOne := func(raw json.RawMessage) (orderedObject, error) {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
			return orderedObject{}, fmt.Errorf("%s is not an object", abbreviate(raw))
		}
		var o orderedObject
		for _, k := range a.Keys {
			if v, ok := obj[k]; ok {
				o.set(k, v)
			}
		}
		return o, nil
	}
	if d := bytes.TrimSpace(a.Data); len(d) > 0 && d[0] == '[' {
		var items []json.RawMessage
		if err := json.Unmarshal(d, &items); err != nil {
			return nil, err
		}
		out := make([]orderedObject, len(items))
		for i, it := range items {
			o, err := pickOne(it)
			if err != nil {
				return nil, fmt.Errorf("data[%d]: %w", i, err)
			}
			out[i] = o
		}
		return out, nil
	}
	return pickOne(a.Data)
}

func abbreviate(raw json.RawMessage) string {
	s := string(raw)
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// decodeValue decodes raw for comparison (nil when absent).
func decodeValue(raw json.RawMessage) any {
	if raw == nil {
		return nil
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return nil
	}
	return v
}

// canonical is a value's JSON with sorted keys, normalised spacing and
// numbers as float64, so values JavaScript deems equal (1 and 1.0) map to the
// same string.
func canonical(raw json.RawMessage) string {
	if raw == nil {
		return "undefined"
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return string(raw)
	}
	return string(b)
}

// typeRank orders values of different JSON types.
func typeRank(v any) int {
	switch v.(type) {
	case nil:
		return 0
	case bool:
		return 1
	case json.Number:
		return 2
	case string:
		return 3
	case []any:
		return 4
	}
	return 5
}

func compareValues(x, y any) int {
	if c := cmp.Compare(typeRank(x), typeRank(y)); c != 0 {
		return c
	}
	switch xv := x.(type) {
	case bool:
		yv := y.(bool)
		switch {
		case xv == yv:
			return 0
		case !xv:
			return -1
		}
		return 1
	case json.Number:
		xf, _ := xv.Float64()
		yf, _ := y.(json.Number).Float64()
		return cmp.Compare(xf, yf)
	case string:
		return strings.Compare(xv, y.(string))
	case nil:
		return 0
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return bytes.Compare(xb, yb)
}

// orderedObject is a JSON object that keeps insertion order.
type orderedObject struct {
	keys   []string
	values map[string]any
}

func (o *orderedObject) set(k string, v any) {
	if o.values == nil {
		o.values = map[string]any{}
	}
	if _, ok := o.values[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.values[k] = v
}

func (o orderedObject) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		vb, err := json.Marshal(o.values[k])
		if err != nil {
			return nil, err
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
