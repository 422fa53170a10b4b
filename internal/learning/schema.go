package learning

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/pml-go/pml/internal/analysis"
	"github.com/pml-go/pml/internal/outputtype"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/registry"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/tools"
)

// MaxExamples bounds the observed values kept per parameter.
const MaxExamples = 5

// schema is a JSON Schema decoded for editing; keys come back sorted.
type schema = map[string]any

// paramsSchema is the input schema of lifted code: base (what the analysis
// inferred from how the code reads args) with each lifted parameter typed
// from its value, its value as the default and first example, and optional.
func paramsSchema(base json.RawMessage, params []analysis.Param, doc func(tool, arg string) string) json.RawMessage {
	s := outputtype.Decode(base)
	if s == nil {
		s = schema{"type": "object"}
	}
	if len(params) == 0 {
		return outputtype.Encode(s)
	}
	props := outputtype.ObjectOf(s["properties"])
	if props == nil {
		props = schema{}
	}
	for _, p := range params {
		v := jsonValue(p.JSONValue())
		prop := outputtype.TypeOf(v, 1, nil)
		prop["default"] = v
		prop["examples"] = []any{v}
		if p.Tool != "" {
			// What it is for, in the tool's words, and where it goes.
			where := p.Arg + " of " + p.Tool
			if d := doc(p.Tool, p.Arg); d != "" {
				where = d + " (" + where + ")"
			}
			prop["description"] = where
		}
		props[p.Name] = prop
	}
	s["type"] = "object"
	s["properties"] = props
	if req, ok := s["required"].([]any); ok {
		req = slices.DeleteFunc(req, func(x any) bool {
			name, _ := x.(string)
			_, lifted := outputtype.ObjectOf(props[name])["default"]
			return lifted
		})
		if len(req) == 0 {
			delete(s, "required")
		} else {
			s["required"] = req
		}
	}
	return outputtype.Encode(s)
}

// addExamples adds a run's parameter values to a capability's input schema
// as examples (the newest MaxExamples distinct ones), widening a
// parameter's type when the run's value has another.
func addExamples(raw json.RawMessage, params []analysis.Param) json.RawMessage {
	s := outputtype.Decode(raw)
	props := outputtype.ObjectOf(s["properties"])
	if props == nil {
		return raw
	}
	for _, p := range params {
		prop := outputtype.ObjectOf(props[p.Name])
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
		props[p.Name] = outputtype.MergeTypes(prop, outputtype.TypeOf(v, 1, nil))
	}
	return outputtype.Encode(s)
}

// WithDefaults fills the top-level properties args leaves out with their
// schema defaults: a capability called with no arguments repeats its first
// run. args that is not a JSON object is returned as it is, for the
// validation to refuse.
func WithDefaults(raw, args json.RawMessage) json.RawMessage {
	props := outputtype.ObjectOf(outputtype.Decode(raw)["properties"])
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
		def, ok := outputtype.ObjectOf(p)["default"]
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

// CallArgs checks the arguments of one call of capability c, as the caller
// sees it (registry.ViewFor), called by id, as a tool's are checked: an
// unknown field is refused with the nearest known name, a parameter whose
// value varied across the runs is required (registry.RequireLifted: a past
// run's value is never a silent default), one that never varied takes its
// value when left out, and a value of the wrong type is refused. A mismatch is TOOL_ERROR "invalid arguments" that carries the
// capability's declaration, so the caller can fix the call.
func CallArgs(v *tools.Validator, id string, c store.Capability, args json.RawMessage) (json.RawMessage, error) {
	schema := registry.RequireLifted(c.ArgsSchema)
	refuse := func(msg string) error {
		decl := tools.Declaration(tools.Info{ID: id, InputSchema: schema, OutputSchema: c.OutputSchema})
		return pmlerr.New(pmlerr.ToolError, "capability %s: %s; its declaration: %s", id, msg, decl).
			With("capability", id).With("declaration", decl)
	}
	if msg := unknownArgs(schema, args); msg != "" {
		return nil, refuse(msg)
	}
	args = WithDefaults(schema, args) // values that never varied
	if len(schema) == 0 {
		return args, nil
	}
	err := v.Validate(schema, args)
	switch {
	case err == nil, errors.Is(err, tools.ErrInvalidSchema):
		return args, nil // a schema we cannot compile checks nothing, as for tools
	}
	msg := err.Error()
	if pe, ok := pmlerr.As(err); ok {
		msg = pe.Message
	}
	return nil, refuse(msg)
}

// unknownArgs names the fields of args that the capability's code never
// reads, with the nearest field it does; "" when there is none. Code that
// reads args as a whole (its schema lists no properties) takes any field;
// code that never reads args takes none.
func unknownArgs(schema, args json.RawMessage) string {
	var given map[string]json.RawMessage
	if json.Unmarshal(args, &given) != nil || len(given) == 0 {
		return "" // not an object: the validation says so
	}
	s := outputtype.Decode(schema)
	props := outputtype.ObjectOf(s["properties"])
	if len(schema) > 0 && (props == nil || s["additionalProperties"] != nil && s["additionalProperties"] != false) {
		return ""
	}
	known := slices.Sorted(maps.Keys(props))
	var unknown []string
	for _, name := range slices.Sorted(maps.Keys(given)) {
		if _, ok := props[name]; !ok {
			unknown = append(unknown, strconv.Quote(name))
		}
	}
	switch {
	case len(unknown) == 0:
		return ""
	case len(known) == 0:
		return "invalid arguments: unknown field(s) " + strings.Join(unknown, ", ") + ": it takes no arguments"
	}
	msg := "invalid arguments: unknown field(s) " + strings.Join(unknown, ", ")
	if near := tools.Nearest(strings.Trim(unknown[0], `"`), known, 1); len(near) > 0 {
		msg += "; did you mean " + strconv.Quote(near[0]) + "?"
	}
	return msg
}
