package analysis

import (
	"encoding/json"
	"slices"
)

// argNode is what the code reveals about `args` or one of its properties.
type argNode struct {
	read       bool // read without a fallback
	optional   bool // guarded, defaulted or read through optional chaining
	types      []string
	def        any
	hasDefault bool
	props      map[string]*argNode
	order      []string
}

// argNode returns the node for a path of `args`, creating it.
func (b *builder) argNode(path []string) *argNode {
	if b.schema == nil {
		b.schema = &argNode{}
	}
	n := b.schema
	for _, key := range path {
		if n.props == nil {
			n.props = map[string]*argNode{}
		}
		c, ok := n.props[key]
		if !ok {
			c = &argNode{}
			n.props[key] = c
			n.order = append(n.order, key)
		}
		n = c
	}
	return n
}

// hint adds a possible JSON Schema type.
func (n *argNode) hint(t string) {
	for i, have := range n.types {
		switch {
		case have == t, have == "number" && t == "integer":
			return
		case have == "integer" && t == "number":
			n.types[i] = "number"
			return
		}
	}
	n.types = append(n.types, t)
}

func (n *argNode) setDefault(v any) {
	if !n.hasDefault {
		n.def, n.hasDefault = v, true
		if t := valueType(v); t != "" {
			n.hint(t)
		}
	}
}

// schemaJSON renders the inferred schema; nil when args is never used.
// whole says the code also uses args as a whole: the schema then takes any
// other field (additionalProperties), where otherwise a field the code never
// reads is refused (docs/how-it-works.md "Learned capabilities").
func schemaJSON(root *argNode, whole bool) json.RawMessage {
	if root == nil && !whole {
		return nil
	}
	if root == nil {
		root = &argNode{}
	}
	root.types = []string{"object"}
	s := root.schema()
	if whole {
		s = append(s, member{"additionalProperties", true})
	}
	return appendJSON(nil, s)
}

// schema renders n as a JSON Schema object, keys in a stable order and
// properties in order of first use.
func (n *argNode) schema() object {
	s := object{}
	types := n.types
	if len(n.props) > 0 && len(types) == 0 {
		types = []string{"object"}
	}
	switch len(types) {
	case 0:
	case 1:
		s = append(s, member{"type", types[0]})
	default:
		s = append(s, member{"type", types})
	}
	if n.hasDefault {
		s = append(s, member{"default", n.def})
	}
	if len(n.props) == 0 || !slices.Contains(types, "object") {
		return s
	}
	props := object{}
	required := []string{}
	for _, key := range n.order {
		c := n.props[key]
		props = append(props, member{key, c.schema()})
		if c.read && !c.optional && !c.hasDefault {
			required = append(required, key)
		}
	}
	s = append(s, member{"properties", props})
	if len(required) > 0 {
		s = append(s, member{"required", required})
	}
	return s
}
