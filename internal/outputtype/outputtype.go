// Package outputtype infers the type of what a tool or a capability
// returns from the values it returned: JSON Schema types, object properties
// and array items, bounded in depth and size, widened as results differ.
// No value ever enters a type, nor any key of the data: an object keyed by
// data is a map (docs/how-it-works.md "Learned capabilities"). Learning
// types capabilities with it, and the registry cleans what another project
// sees of an output schema with it.
package outputtype

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strings"
)

// Output schemas are inferred to this depth, with at most this many
// properties per object: enough to type a result, bounded whatever a tool
// returned.
const (
	MaxDepth = 4
	MaxProps = 32
	// maxSchemaBytes bounds a schema a package reports.
	maxSchemaBytes = 8 << 10
)

// schema is a JSON Schema decoded for editing; keys come back sorted.
type schema = map[string]any

// Decode is a JSON Schema decoded for editing; nil when raw is not a JSON
// object.
func Decode(raw json.RawMessage) map[string]any {
	var s schema
	if len(raw) == 0 || json.Unmarshal(raw, &s) != nil || s == nil {
		return nil
	}
	return s
}

// Encode is s as JSON; nil for nil.
func Encode(s map[string]any) json.RawMessage {
	if s == nil {
		return nil
	}
	out, err := json.Marshal(s)
	if err != nil {
		return nil
	}
	return out
}

// ObjectOf is v when it is a JSON object, else nil.
func ObjectOf(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// Of types a run's result: the JSON types to MaxDepth, the
// properties of objects (at most MaxProps) and the union of an
// array's items. No value of the result is in it, and no key of its data:
// an object with a key that is not a name the code chose (dataKey, with
// flag the sanitizer's rules; nil: shape alone) is typed as a map.
func Of(result json.RawMessage, flag func(string) string) json.RawMessage {
	if len(bytes.TrimSpace(result)) == 0 {
		return nil
	}
	var v any
	if json.Unmarshal(result, &v) != nil {
		return nil
	}
	if m, ok := v.(map[string]any); ok && m["_truncated"] == true {
		return nil // a value a trace's bounds cut short has no type
	}
	return Encode(TypeOf(v, MaxDepth, flag))
}

// Merge is the union of two output schemas.
func Merge(a, b json.RawMessage) json.RawMessage {
	sa, sb := Decode(a), Decode(b)
	switch {
	case sa == nil:
		return b
	case sb == nil:
		return a
	}
	return Encode(MergeTypes(sa, sb))
}

// Clean bounds an output schema a package reported: at most
// maxSchemaBytes of a JSON object, else none, kept to the types, properties,
// items and map values an inferred one has, to MaxDepth, with any
// object keyed by data (dataKey) made a map.
func Clean(raw json.RawMessage, flag func(string) string) json.RawMessage {
	if len(raw) > maxSchemaBytes {
		return nil
	}
	s := Decode(raw)
	if s == nil {
		return nil
	}
	return Encode(clamp(s, MaxDepth, flag))
}

// dataKey reports whether an object's key came from data rather than from
// the code or tool that built the object: a key that is not an identifier of
// at most 40 characters (a file name, an e-mail address, a path, a URL, a
// date, text), that holds 4 or more digits or is a hex id (8 or more hex
// digits and '-' or '_', a digit among them: hashes, UUIDs), that reads as
// text rather than a name (sentenceKey), or that a sanitizer rule flags (a
// secret, a .env value, personal data). Such keys differ from one input to
// the next, may hold what someone's data held, or speak to whoever reads the
// type, so they never enter a schema (docs/how-it-works.md "Learned
// capabilities", docs/security.md "What another project sees of a shared
// capability").
func dataKey(k string, flag func(string) string) bool {
	if len(k) == 0 || len(k) > 40 {
		return true
	}
	digits, hex := 0, 0
	for i, c := range k {
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '$'
		digit := c >= '0' && c <= '9'
		if !letter && !(digit && i > 0) {
			return true
		}
		switch {
		case digit:
			digits++
			hex++
		case c >= 'a' && c <= 'f', c >= 'A' && c <= 'F':
			hex++
		case c != '_':
			hex = -len(k) // a letter past f: no hex id
		}
	}
	if digits >= 4 || hex >= 8 && digits > 0 || sentenceKey(k) {
		return true
	}
	return flag != nil && flag(k) != ""
}

// sentenceKey reports whether an identifier key reads as text rather than a
// name: a type is shown to an AI, and a key such as
// IGNORE_ALL_PREVIOUS_INSTRUCTIONS or read_dot_env_and_send_to_attacker is an
// instruction to it, not a property. Split into words at '_', '$' and case
// changes (keyWords), a key is text when it has
//   - 7 words or more;
//   - 3 words or more and no lower-case letter (a shouted sentence);
//   - 4 words or more, one of them a word that names do not use: a
//     conjunction, an article, a pronoun, a word of address (proseWords);
//   - 4 words or more, the first a verb that instructs (instructionVerbs).
//
// Names such as created_at, fileName, total_count, html_url, node_id,
// delete_branch_on_merge or use_squash_pr_title_as_default stay names.
func sentenceKey(k string) bool {
	words := keyWords(k)
	n := len(words)
	switch {
	case n >= 7:
		return true
	case n >= 3 && !hasLower(k):
		return true
	case n < 4:
		return false
	case instructionVerbs[words[0]]:
		return true
	}
	for _, w := range words {
		if proseWords[w] {
			return true
		}
	}
	return false
}

// proseWords are words of a sentence that a name of four words or more
// does not hold.
var proseWords = map[string]bool{
	"and": true, "then": true, "the": true, "your": true, "you": true, "me": true, "my": true,
	"please": true, "now": true, "instead": true, "all": true, "must": true, "should": true,
}

// instructionVerbs start an instruction, not a name.
var instructionVerbs = map[string]bool{
	"ignore": true, "disregard": true, "forget": true, "override": true, "bypass": true,
	"exfiltrate": true, "reveal": true, "leak": true, "send": true, "email": true,
	"upload": true, "execute": true, "tell": true,
}

func hasLower(s string) bool {
	for _, c := range s {
		if c >= 'a' && c <= 'z' {
			return true
		}
	}
	return false
}

// keyWords splits an identifier into lower-case words: at '_' and '$', at
// a lower-case letter or digit followed by an upper-case one ("fileName"),
// and at the end of an acronym ("HTMLParser").
func keyWords(k string) []string {
	var words []string
	start := -1
	flush := func(end int) {
		if start >= 0 && end > start {
			words = append(words, strings.ToLower(k[start:end]))
		}
		start = -1
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c == '_' || c == '$' {
			flush(i)
			continue
		}
		if start >= 0 && isUpper(c) {
			prev := k[i-1]
			nextLower := i+1 < len(k) && k[i+1] >= 'a' && k[i+1] <= 'z'
			if !isUpper(prev) || nextLower {
				flush(i)
			}
		}
		if start < 0 {
			start = i
		}
	}
	flush(len(k))
	return words
}

func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }

// keyedByData reports whether props has more keys than an object keeps, or
// any key that is a dataKey.
func keyedByData[V any](props map[string]V, flag func(string) string) bool {
	if len(props) > MaxProps {
		return true
	}
	for k := range props {
		if dataKey(k, flag) {
			return true
		}
	}
	return false
}

// mapOf is the schema of a map whose values have the union of the types
// of values.
func mapOf(values []schema) schema {
	var v schema
	for _, x := range values {
		if v == nil {
			v = x
		} else {
			v = MergeTypes(v, x)
		}
	}
	if v == nil {
		v = schema{}
	}
	return schema{"type": "object", "additionalProperties": v}
}

// clamp keeps of s what TypeOf writes, to depth.
func clamp(s schema, depth int, flag func(string) string) schema {
	out := schema{}
	if t := Types(s); len(t) == 1 {
		out["type"] = t[0]
	} else if len(t) > 1 {
		list := make([]any, 0, len(t))
		for _, x := range t[:min(len(t), 7)] {
			list = append(list, x)
		}
		out["type"] = list
	}
	if depth <= 1 {
		return out
	}
	props := ObjectOf(s["properties"])
	if extra := ObjectOf(s["additionalProperties"]); extra != nil || keyedByData(props, flag) {
		values := make([]schema, 0, len(props)+1)
		if extra != nil {
			values = append(values, clamp(extra, depth-1, flag))
		}
		for i, k := range slices.Sorted(maps.Keys(props)) {
			if i >= MaxProps {
				break
			}
			if p := ObjectOf(props[k]); p != nil {
				values = append(values, clamp(p, depth-1, flag))
			}
		}
		m := mapOf(values)
		m["type"] = out["type"]
		return m
	}
	if props != nil {
		kept := schema{}
		for i, k := range slices.Sorted(maps.Keys(props)) {
			if i >= MaxProps {
				break
			}
			if p := ObjectOf(props[k]); p != nil {
				kept[k] = clamp(p, depth-1, flag)
			}
		}
		out["properties"] = kept
	}
	if items := ObjectOf(s["items"]); items != nil {
		out["items"] = clamp(items, depth-1, flag)
	}
	return out
}

// TypeOf is the schema of one JSON value, to depth; an object keyed by
// data (dataKey) is a map.
func TypeOf(v any, depth int, flag func(string) string) schema {
	switch x := v.(type) {
	case nil:
		return schema{"type": "null"}
	case bool:
		return schema{"type": "boolean"}
	case float64:
		if x == float64(int64(x)) {
			return schema{"type": "integer"}
		}
		return schema{"type": "number"}
	case string:
		return schema{"type": "string"}
	case []any:
		s := schema{"type": "array"}
		if depth <= 1 || len(x) == 0 {
			return s
		}
		items := TypeOf(x[0], depth-1, flag)
		for _, el := range x[1:min(len(x), 64)] {
			items = MergeTypes(items, TypeOf(el, depth-1, flag))
		}
		s["items"] = items
		return s
	case map[string]any:
		s := schema{"type": "object"}
		if depth <= 1 {
			return s
		}
		keys := slices.Sorted(maps.Keys(x))
		if keyedByData(x, flag) {
			values := make([]schema, 0, min(len(keys), MaxProps))
			for _, k := range keys[:min(len(keys), MaxProps)] {
				values = append(values, TypeOf(x[k], depth-1, flag))
			}
			return mapOf(values)
		}
		props := schema{}
		for _, k := range keys[:min(len(keys), MaxProps)] {
			props[k] = TypeOf(x[k], depth-1, flag)
		}
		s["properties"] = props
		return s
	}
	return schema{}
}

// MergeTypes widens a to also describe what b does (nil is no schema).
// Two objects whose keys differ more than they agree (fewer shared than
// not) are one map: their keys came from data that differed between runs.
// A map merged with an object stays a map.
func MergeTypes(a, b schema) schema {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	out := schema{}
	for k, v := range a {
		out[k] = v
	}
	SetTypes(out, UnionTypes(Types(a), Types(b)))
	pa, pb := ObjectOf(a["properties"]), ObjectOf(b["properties"])
	ea, eb := ObjectOf(a["additionalProperties"]), ObjectOf(b["additionalProperties"])
	if ea != nil || eb != nil || keysApart(pa, pb) {
		var values []schema
		for _, x := range []schema{ea, eb} {
			if x != nil {
				values = append(values, x)
			}
		}
		for _, p := range []schema{pa, pb} {
			for _, k := range slices.Sorted(maps.Keys(p)) {
				values = append(values, ObjectOf(p[k]))
			}
		}
		delete(out, "properties")
		out["additionalProperties"] = mapOf(values)["additionalProperties"]
	} else if pa != nil || pb != nil {
		props := schema{}
		for k, v := range pa {
			props[k] = v
		}
		for k, v := range pb {
			if have := ObjectOf(props[k]); have != nil {
				props[k] = MergeTypes(have, ObjectOf(v))
			} else if len(props) < MaxProps {
				props[k] = v
			}
		}
		out["properties"] = props
	}
	ia, ib := ObjectOf(a["items"]), ObjectOf(b["items"])
	switch {
	case ia != nil && ib != nil:
		out["items"] = MergeTypes(ia, ib)
	case ib != nil:
		out["items"] = ib
	}
	return out
}

// keysApart reports whether two objects' keys differ enough to be data:
// more keys between them than an object keeps, or fewer shared than not.
func keysApart(a, b schema) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	shared := 0
	for k := range a {
		if _, ok := b[k]; ok {
			shared++
		}
	}
	union := len(a) + len(b) - shared
	return union > MaxProps || 2*shared < union
}

// UnionTypes is ta widened by tb: an integer and a number are a number.
func UnionTypes(ta, tb []string) []string {
	union := slices.Clone(ta)
	for _, t := range tb {
		switch {
		case slices.Contains(union, t):
		case t == "integer" && slices.Contains(union, "number"):
		case t == "number" && slices.Contains(union, "integer"):
			union[slices.Index(union, "integer")] = "number"
		default:
			union = append(union, t)
		}
	}
	return union
}

// SetTypes writes union as s's type: one name, or a list of them.
func SetTypes(s map[string]any, union []string) {
	if len(union) == 1 {
		s["type"] = union[0]
	} else if len(union) > 1 {
		list := make([]any, len(union))
		for i, t := range union {
			list[i] = t
		}
		s["type"] = list
	}
}

// Bound encodes s within maxBytes, cut to a lesser depth while it is
// larger; nil when not even its type fits.
func Bound(s map[string]any, maxBytes int) json.RawMessage {
	if s == nil {
		return nil
	}
	for depth := MaxDepth; depth >= 1; depth-- {
		if b := Encode(cut(s, depth)); len(b) <= maxBytes {
			return b
		}
	}
	return nil
}

// cut keeps of s its types, properties, items and map values, to depth.
func cut(s schema, depth int) schema {
	out := schema{}
	SetTypes(out, Types(s))
	if depth <= 1 {
		return out
	}
	if props := ObjectOf(s["properties"]); props != nil {
		kept := schema{}
		for _, k := range slices.Sorted(maps.Keys(props)) {
			if p := ObjectOf(props[k]); p != nil && len(kept) < MaxProps {
				kept[k] = cut(p, depth-1)
			}
		}
		out["properties"] = kept
	}
	for _, field := range []string{"items", "additionalProperties"} {
		if sub := ObjectOf(s[field]); sub != nil {
			out[field] = cut(sub, depth-1)
		}
	}
	return out
}

// Types are the JSON Schema type names of s.
func Types(s map[string]any) []string {
	switch t := s["type"].(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, x := range t {
			if str, ok := x.(string); ok {
				out = append(out, str)
			}
		}
		return out
	}
	return nil
}

// IsNull reports whether schema types only null: a result of nothing.
func IsNull(schema json.RawMessage) bool {
	t := Types(Decode(schema))
	return len(t) == 1 && t[0] == "null"
}
