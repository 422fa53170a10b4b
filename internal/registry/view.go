package registry

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/pml-go/pml/internal/outputtype"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/textcut"
)

// ViewFor is c as viewer sees it (docs/security.md "Tenants and names"). The
// owner's project sees all of it; anyone else, a shared capability without
// the values of the owner's runs: its input schema keeps the parameters and
// their types but no default or example (a parameter that had a default is
// required instead, as nothing fills it in), and its description has those
// values replaced by the parameter's name. Its output schema shows no key
// of the owner's data (outputtype.Clean, flag the sanitizer's rules): a
// schema stored before that rule is cleaned here.
func ViewFor(c store.Capability, viewer store.Scope, flag func(string) string) store.Capability {
	if c.Scope == viewer {
		c.ArgsSchema = RequireLifted(c.ArgsSchema)
		return c
	}
	c.OutputSchema = outputtype.Clean(c.OutputSchema, flag)
	// Whose capability it is, discover says in brackets: text of the owner's
	// never looks like that label.
	c.Description = strings.NewReplacer("[", "(", "]", ")").Replace(textcut.Printable(c.Description))
	if len(c.ArgsSchema) == 0 {
		return c
	}
	var s map[string]any
	if json.Unmarshal(c.ArgsSchema, &s) != nil || s == nil {
		c.ArgsSchema = nil
		return c
	}
	props, _ := s["properties"].(map[string]any)
	req, _ := s["required"].([]any)
	desc := c.Description
	names := make([]string, 0, len(props))
	for name := range props {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		p, _ := props[name].(map[string]any)
		if p == nil {
			continue
		}
		for _, v := range ownerValues(p) {
			if len(v) >= 2 {
				desc = strings.ReplaceAll(desc, v, "<"+name+">")
			}
		}
		if _, had := p["default"]; had && !slices.Contains(req, any(name)) {
			req = append(req, name)
		}
		scrubValues(p)
	}
	scrubValues(s)
	if len(req) > 0 {
		s["required"] = req
	}
	c.ArgsSchema, _ = json.Marshal(s)
	c.Description = desc
	return c
}

// RequireLifted is a capability's input schema as callers see it, its
// owner too: a parameter learning lifted out of the runs' values whose value
// varied across them (it has a default and two examples or more) is
// required, and the value of the run it was learned from is an example,
// never a silent default (docs/how-it-works.md "Learned capabilities"). A
// lifted value that never varied keeps its default, as does a default the
// code itself gives (`args.n ?? 1`). The stored schema keeps the default,
// which learning reads back as the first run.
func RequireLifted(raw json.RawMessage) json.RawMessage {
	var s map[string]any
	if len(raw) == 0 || json.Unmarshal(raw, &s) != nil || s == nil {
		return raw
	}
	props, _ := s["properties"].(map[string]any)
	req, _ := s["required"].([]any)
	changed := false
	for _, name := range slices.Sorted(maps.Keys(props)) {
		p, _ := props[name].(map[string]any)
		def, lifted := p["default"]
		ex, _ := p["examples"].([]any)
		if !slices.ContainsFunc(ex, func(x any) bool { return reflect.DeepEqual(x, def) }) {
			ex = append([]any{def}, ex...)
		}
		if !lifted || len(ex) < 2 {
			continue
		}
		p["examples"] = ex
		delete(p, "default")
		if !slices.Contains(req, any(name)) {
			req = append(req, name)
		}
		changed = true
	}
	if !changed {
		return raw
	}
	s["required"] = req
	out, err := json.Marshal(s)
	if err != nil {
		return raw
	}
	return out
}

// ownerValues are the default and examples of a property, as text.
func ownerValues(p map[string]any) []string {
	vals := []any{p["default"]}
	if ex, ok := p["examples"].([]any); ok {
		vals = append(vals, ex...)
	}
	var out []string
	for _, v := range vals {
		switch x := v.(type) {
		case nil:
		case string:
			out = append(out, x)
		default:
			if b, err := json.Marshal(x); err == nil {
				out = append(out, string(b))
			}
		}
	}
	return out
}

// scrubValues removes default, examples, enum and const throughout a
// schema: each can hold a value of the owner's runs.
func scrubValues(s map[string]any) {
	for _, k := range []string{"default", "examples", "enum", "const"} {
		delete(s, k)
	}
	if props, ok := s["properties"].(map[string]any); ok {
		for _, p := range props {
			if sub, ok := p.(map[string]any); ok {
				scrubValues(sub)
			}
		}
	}
	if items, ok := s["items"].(map[string]any); ok {
		scrubValues(items)
	}
}
