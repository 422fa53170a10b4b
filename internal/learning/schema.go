package learning

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"

	"github.com/pml-go/pml/internal/analysis"
	"github.com/pml-go/pml/internal/outputtype"
	"github.com/pml-go/pml/internal/pmlerr"
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
