package learning

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"

	"github.com/pml-go/pml/internal/analysis"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/tools"
)

// MaxExamples bounds the observed values kept per parameter.
const MaxExamples = 5

// Output schemas are inferred to this depth, with at most this many
// properties per object: enough to type a result, bounded whatever a tool
// returned.
const (
	maxOutputDepth = 4
	maxOutputProps = 32
	// maxSchemaBytes bounds a schema a package reports.
	maxSchemaBytes = 8 << 10
)

// schema is a JSON Schema decoded for editing; keys come back sorted.
type schema = map[string]any

func decode(raw json.RawMessage) schema {
	var s schema
	if len(raw) == 0 || json.Unmarshal(raw, &s) != nil || s == nil {
		return nil
	}
	return s
}

func encode(s schema) json.RawMessage {
	if s == nil {
		return nil
	}
	out, err := json.Marshal(s)
	if err != nil {
		return nil
	}
	return out
}

func objectOf(v any) schema {
	m, _ := v.(map[string]any)
	return m
}

// paramsSchema is the input schema of lifted code: base (what the analysis
// inferred from how the code reads args) with each lifted parameter typed
// from its value, its value as the default and first example, and optional.
func paramsSchema(base json.RawMessage, params []analysis.Param) json.RawMessage {
	s := decode(base)
	if s == nil {
		s = schema{"type": "object"}
	}
	if len(params) == 0 {
		return encode(s)
	}
	props := objectOf(s["properties"])
	if props == nil {
		props = schema{}
	}
	for _, p := range params {
		v := jsonValue(p.JSONValue())
		prop := typeOf(v, 1)
		prop["default"] = v
		prop["examples"] = []any{v}
		if p.Tool != "" {
			prop["description"] = p.Arg + " of " + p.Tool // where the value goes
		}
		props[p.Name] = prop
	}
	s["type"] = "object"
	s["properties"] = props
	if req, ok := s["required"].([]any); ok {
		req = slices.DeleteFunc(req, func(x any) bool {
			name, _ := x.(string)
			_, lifted := objectOf(props[name])["default"]
			return lifted
		})
		if len(req) == 0 {
			delete(s, "required")
		} else {
			s["required"] = req
		}
	}
	return encode(s)
}

// addExamples adds a run's parameter values to a capability's input schema
// as examples (the newest MaxExamples distinct ones), widening a
// parameter's type when the run's value has another.
func addExamples(raw json.RawMessage, params []analysis.Param) json.RawMessage {
	s := decode(raw)
	props := objectOf(s["properties"])
	if props == nil {
		return raw
	}
	for _, p := range params {
		prop := objectOf(props[p.Name])
		if prop == nil {
			continue
		}
		v := jsonValue(p.JSONValue())
		ex, _ := prop["examples"].([]any)
		if !slices.ContainsFunc(ex, func(x any) bool { return sameValue(x, v) }) {
			ex = append(ex, v)
			if len(ex) > MaxExamples {
				ex = ex[len(ex)-MaxExamples:]
			}
		}
		prop["examples"] = ex
		props[p.Name] = mergeTypes(prop, typeOf(v, 1))
	}
	return encode(s)
}

// WithDefaults fills the top-level properties args leaves out with their
// schema defaults: a capability called with no arguments repeats its first
// run. args that is not a JSON object is returned as it is, for the
// validation to refuse.
func WithDefaults(raw, args json.RawMessage) json.RawMessage {
	props := objectOf(decode(raw)["properties"])
	if len(props) == 0 {
		return args
	}
	var given map[string]json.RawMessage
	if t := bytes.TrimSpace(args); len(t) == 0 || bytes.Equal(t, []byte("null")) {
		given = map[string]json.RawMessage{}
	} else if json.Unmarshal(t, &given) != nil || given == nil {
		return args
	}
	changed := false
	for name, p := range props {
		def, ok := objectOf(p)["default"]
		if _, set := given[name]; set || !ok {
			continue
		}
		b, err := json.Marshal(def)
		if err != nil {
			continue
		}
		given[name], changed = b, true
	}
	if !changed {
		return args
	}
	out, err := json.Marshal(given)
	if err != nil {
		return args
	}
	return out
}

// OutputSchema types a run's result: the JSON types to maxOutputDepth, the
// properties of objects (at most maxOutputProps) and the union of an
// array's items. No value of the result is in it.
func OutputSchema(result json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(result)) == 0 {
		return nil
	}
	var v any
	if json.Unmarshal(result, &v) != nil {
		return nil
	}
	return encode(typeOf(v, maxOutputDepth))
}

// mergeOutput is the union of two output schemas.
func mergeOutput(a, b json.RawMessage) json.RawMessage {
	sa, sb := decode(a), decode(b)
	switch {
	case sa == nil:
		return b
	case sb == nil:
		return a
	}
	return encode(mergeTypes(sa, sb))
}

// checkReported bounds an output schema a package reported: at most
// maxSchemaBytes of a JSON object, else none, kept to the types, properties
// and items an inferred one has, to maxOutputDepth.
func checkReported(raw json.RawMessage) json.RawMessage {
	if len(raw) > maxSchemaBytes {
		return nil
	}
	s := decode(raw)
	if s == nil {
		return nil
	}
	return encode(clamp(s, maxOutputDepth))
}

// clamp keeps of s what typeOf writes, to depth.
func clamp(s schema, depth int) schema {
	out := schema{}
	if t := types(s); len(t) == 1 {
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
	if props := objectOf(s["properties"]); props != nil {
		kept := schema{}
		for i, k := range sortedKeys(props) {
			if i >= maxOutputProps || len(k) > 128 {
				break
			}
			if p := objectOf(props[k]); p != nil {
				kept[k] = clamp(p, depth-1)
			}
		}
		out["properties"] = kept
	}
	if items := objectOf(s["items"]); items != nil {
		out["items"] = clamp(items, depth-1)
	}
	return out
}

// typeOf is the schema of one JSON value, to depth.
func typeOf(v any, depth int) schema {
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
		items := typeOf(x[0], depth-1)
		for _, el := range x[1:min(len(x), 64)] {
			items = mergeTypes(items, typeOf(el, depth-1))
		}
		s["items"] = items
		return s
	case map[string]any:
		s := schema{"type": "object"}
		if depth <= 1 {
			return s
		}
		props := schema{}
		for i, k := range sortedKeys(x) {
			if i >= maxOutputProps {
				break
			}
			props[k] = typeOf(x[k], depth-1)
		}
		s["properties"] = props
		return s
	}
	return schema{}
}

// mergeTypes widens a to also describe what b does.
func mergeTypes(a, b schema) schema {
	out := schema{}
	for k, v := range a {
		out[k] = v
	}
	setTypes(out, unionTypes(types(a), types(b)))
	pa, pb := objectOf(a["properties"]), objectOf(b["properties"])
	if pa != nil || pb != nil {
		props := schema{}
		for k, v := range pa {
			props[k] = v
		}
		for k, v := range pb {
			if have := objectOf(props[k]); have != nil {
				props[k] = mergeTypes(have, objectOf(v))
			} else if len(props) < maxOutputProps {
				props[k] = v
			}
		}
		out["properties"] = props
	}
	ia, ib := objectOf(a["items"]), objectOf(b["items"])
	switch {
	case ia != nil && ib != nil:
		out["items"] = mergeTypes(ia, ib)
	case ib != nil:
		out["items"] = ib
	}
	return out
}

// unionTypes is ta widened by tb: an integer and a number are a number.
func unionTypes(ta, tb []string) []string {
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

// setTypes writes union as s's type: one name, or a list of them.
func setTypes(s schema, union []string) {
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

func types(s schema) []string {
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

func jsonValue(raw []byte) any {
	var v any
	_ = json.Unmarshal(raw, &v)
	return v
}

func sameValue(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// CallArgs prepares the arguments of one call of capability c, as the
// caller sees it (registry.ViewFor), called by id: its defaults fill in what
// the call leaves out, then the arguments are validated against its input
// schema like any tool's. A mismatch is TOOL_ERROR "invalid arguments" that
// carries the capability's declaration, so the caller can fix the call.
func CallArgs(v *tools.Validator, id string, c store.Capability, args json.RawMessage) (json.RawMessage, error) {
	args = WithDefaults(c.ArgsSchema, args)
	if len(c.ArgsSchema) == 0 {
		return args, nil
	}
	err := v.Validate(c.ArgsSchema, args)
	switch {
	case err == nil, errors.Is(err, tools.ErrInvalidSchema):
		return args, nil // a schema we cannot compile checks nothing, as for tools
	}
	decl := tools.Declaration(tools.Info{ID: id, InputSchema: c.ArgsSchema, OutputSchema: c.OutputSchema})
	msg := err.Error()
	if pe, ok := pmlerr.As(err); ok {
		msg = pe.Message
	}
	return nil, pmlerr.New(pmlerr.ToolError, "capability %s: %s; its declaration: %s", id, msg, decl).
		With("capability", id).With("declaration", decl)
}
