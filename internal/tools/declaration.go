package tools

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"strings"

	"github.com/pml-go/pml/internal/textcut"
)

// maxRefDepth stops rendering of recursive $ref chains.
const maxRefDepth = 4

var identRE = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)

// Declaration renders the TypeScript declaration an AI client needs to call
// the tool, from its JSON Schema:
//
//	/** description */
//	mcp.ns.action(args: { path: string; limit?: number }): Promise<unknown>
//
// The promise carries the type of the tool's output schema when it declares
// one (what a call returns is then its structured content), else unknown.
// An output schema inferred from calls (Info.OutputInferred) is typed the
// same, and the declaration ends with InferredNote.
//
// Object literals go multi-line, with one doc comment per property, when any
// property has a description or default. A schema that does not parse renders
// as Record<string, unknown>; args is optional when no field is required.
func Declaration(info Info) string { return declaration(info, docFull, false) }

// CompactDeclaration is the declaration a discover hit carries: what the AI
// client needs to call the tool and no more (docs/protocol.md "Gateway MCP
// tools"). The tool's description, which the hit carries beside it, is not
// repeated as a comment; a property's comment is its first sentence, cut
// short; the result type has no comments, and is "typeof args" when it is
// the argument type again.
//
// A compact declaration longer than maxCompactDeclaration is rendered lean
// when that is shorter: optional properties keep their names and their
// types' outline (an enum of more than maxLeanEnum values is its base
// type, a nested object "object"), so a tool with dozens of options does
// not cost the AI client kilobytes in every answer it is in; a lookup by
// name answers it whole.
func CompactDeclaration(info Info) string {
	d := declaration(info, docShort, false)
	if len(d) <= maxCompactDeclaration {
		return d
	}
	if lean := declaration(info, docShort, true); len(lean) < len(d) {
		return lean
	}
	return d
}

// Bounds of a compact declaration (CompactDeclaration).
const (
	maxCompactDeclaration = 400
	maxLeanEnum           = 3
)

// docMode is how much of the schemas' descriptions a declaration keeps.
type docMode int

const (
	docFull  docMode = iota // every description whole
	docShort                // each required property's first sentence, at most maxShortDoc bytes
	docNone                 // no comments
)

// maxShortDoc bounds a property comment of a compact declaration: the long
// parameter descriptions some servers write would otherwise dominate a hit.
const maxShortDoc = 48

func declaration(info Info, docs docMode, lean bool) string {
	ns, action := Split(info.ID)
	var b strings.Builder
	if docs == docFull {
		writeDocComment(&b, "", info.Description)
	}
	b.WriteString("mcp")
	b.WriteString(member(ns))
	b.WriteString(member(action))

	root := new(tsSchema)
	if len(info.InputSchema) > 0 {
		if err := json.Unmarshal(info.InputSchema, root); err != nil {
			root = &tsSchema{Type: []string{"object"}}
		}
	}
	r := renderer{root: root, docs: docs, lean: lean}
	argType := r.render(root, "", 0)
	if argType == "unknown" {
		argType = "Record<string, unknown>"
	}
	b.WriteString("(args")
	if len(root.Required) == 0 {
		b.WriteString("?")
	}
	b.WriteString(": ")
	b.WriteString(argType)
	b.WriteString("): Promise<")
	result := resultType(info.OutputSchema, docs)
	if docs != docFull && result != "unknown" && result == resultType(info.InputSchema, docNone) {
		result = "typeof args"
	}
	b.WriteString(result)
	b.WriteString(">")
	if info.OutputInferred && result != "unknown" {
		b.WriteString(InferredNote)
	}
	return b.String()
}

// InferredNote ends the declaration of a tool whose result type was
// inferred from its calls rather than declared.
const InferredNote = " // result type inferred from calls"

// resultType is the TypeScript type of a call's result: unknown without an
// output schema or with one that does not parse. Outside full declarations
// it has no comments: the AI client needs its shape, not its documentation.
func resultType(outputSchema json.RawMessage, docs docMode) string {
	if len(outputSchema) == 0 {
		return "unknown"
	}
	root := new(tsSchema)
	if err := json.Unmarshal(outputSchema, root); err != nil {
		return "unknown"
	}
	r := renderer{root: root}
	if docs != docFull {
		r = renderer{root: root, docs: docNone, shallow: true}
	}
	return r.render(root, "", 0)
}

// member renders a property access: ".name", or `["na-me"]` when name is not
// an identifier.
func member(name string) string {
	if identRE.MatchString(name) {
		return "." + name
	}
	return "[" + jsString(name) + "]"
}

func jsString(s string) string {
	out, _ := json.Marshal(s)
	return string(out)
}

type renderer struct {
	root *tsSchema
	docs docMode
	// shallow renders objects nested in an object as "object": a compact
	// declaration's result type shows the result's top-level fields only.
	shallow bool
	nested  bool // rendering inside an object's property
	// lean renders optional properties' types in outline (CompactDeclaration).
	lean    bool
	outline bool // rendering an optional property's type under lean
}

// render returns the TypeScript type of s; indent is the indentation of the
// line the type starts on, for multi-line object literals.
func (r renderer) render(s *tsSchema, indent string, depth int) string {
	if s == nil {
		return "unknown"
	}
	if s.Never {
		return "never"
	}
	t := r.renderBase(s, indent, depth)
	if s.Nullable && t != "unknown" {
		t = union([]string{t, "null"})
	}
	return t
}

func (r renderer) renderBase(s *tsSchema, indent string, depth int) string {
	switch {
	case s.Ref != "":
		target := r.lookupRef(s.Ref)
		if target == nil || depth >= maxRefDepth {
			return "unknown"
		}
		return r.render(target, indent, depth+1)
	case len(s.Const) > 0:
		return literal(s.Const)
	case len(s.Enum) > maxLeanEnum && r.outline:
		parts := make([]string, len(s.Enum))
		for i, e := range s.Enum {
			parts[i] = literalType(e)
		}
		return union(slices.Compact(parts))
	case len(s.Enum) > 0:
		parts := make([]string, len(s.Enum))
		for i, e := range s.Enum {
			parts[i] = literal(e)
		}
		return union(parts)
	case len(s.AnyOf) > 0:
		parts := make([]string, len(s.AnyOf))
		for i, a := range s.AnyOf {
			parts[i] = r.render(a, indent, depth)
		}
		return union(parts)
	case len(s.AllOf) > 0:
		parts := make([]string, len(s.AllOf))
		for i, a := range s.AllOf {
			parts[i] = wrapComposite(r.render(a, indent, depth))
		}
		return strings.Join(slices.Compact(parts), " & ")
	}
	types := s.Type
	if len(types) == 0 {
		switch {
		case len(s.Properties) > 0 || s.AdditionalProperties != nil:
			types = []string{"object"}
		case s.Items != nil || len(s.TupleItems) > 0:
			types = []string{"array"}
		default:
			return "unknown"
		}
	}
	parts := make([]string, len(types))
	for i, typ := range types {
		parts[i] = r.renderType(typ, s, indent, depth)
	}
	return union(parts)
}

func (r renderer) renderType(typ string, s *tsSchema, indent string, depth int) string {
	switch typ {
	case "string", "boolean", "null", "number":
		return typ
	case "integer":
		return "number"
	case "array":
		if len(s.TupleItems) > 0 {
			parts := make([]string, len(s.TupleItems))
			for i, it := range s.TupleItems {
				parts[i] = r.render(it, indent, depth)
			}
			return "[" + strings.Join(parts, ", ") + "]"
		}
		return wrapComposite(r.render(s.Items, indent, depth)) + "[]"
	case "object":
		return r.renderObject(s, indent, depth)
	}
	return "unknown"
}

func (r renderer) renderObject(s *tsSchema, indent string, depth int) string {
	if r.shallow && r.nested {
		return "object"
	}
	r.nested = true
	var extra string // the index signature's value type, if any
	if ap := s.AdditionalProperties; ap != nil && !ap.Never {
		extra = r.render(ap, indent+"  ", depth)
	}
	if len(s.Properties) == 0 {
		if s.AdditionalProperties != nil && s.AdditionalProperties.Never {
			return "{}"
		}
		if extra == "" {
			extra = "unknown"
		}
		return "Record<string, " + extra + ">"
	}
	doc := func(p tsProperty) string {
		switch {
		case r.docs == docNone:
			return ""
		case r.docs == docShort && !slices.Contains(s.Required, p.Name):
			return "" // an optional property's name says enough to leave it out
		case r.docs == docShort:
			return shortDoc(p.Schema.Description)
		}
		return propertyDoc(p.Schema)
	}
	// A compact declaration stays on one line, its comments inline: line
	// breaks and indentation cost the AI client tokens and say nothing.
	multiline := r.docs == docFull && slices.ContainsFunc(s.Properties, func(p tsProperty) bool { return doc(p) != "" })
	inner := indent + "  "
	var fields []string
	for _, p := range s.Properties {
		var f strings.Builder
		if multiline {
			writeDocComment(&f, inner, doc(p))
			f.WriteString(inner)
		} else if d := doc(p); d != "" {
			f.WriteString("/** " + strings.ReplaceAll(d, "*/", "*\\/") + " */ ")
		}
		f.WriteString(propertyKey(p.Name))
		if !slices.Contains(s.Required, p.Name) {
			f.WriteString("?")
		}
		f.WriteString(": ")
		pr := r
		if r.lean && !slices.Contains(s.Required, p.Name) {
			pr.outline, pr.shallow = true, true
		}
		f.WriteString(pr.render(p.Schema, inner, depth))
		fields = append(fields, f.String())
	}
	if extra != "" {
		sig := "[key: string]: " + extra
		if multiline {
			sig = inner + sig
		}
		fields = append(fields, sig)
	}
	if multiline {
		return "{\n" + strings.Join(fields, ";\n") + ";\n" + indent + "}"
	}
	return "{ " + strings.Join(fields, "; ") + " }"
}

// literalType is the TypeScript type of a JSON literal: "string", …
func literalType(v json.RawMessage) string {
	switch t := bytes.TrimSpace(v); {
	case len(t) == 0:
		return "unknown"
	case t[0] == '"':
		return "string"
	case t[0] == 't' || t[0] == 'f':
		return "boolean"
	case t[0] == 'n':
		return "null"
	case t[0] == '{':
		return "object"
	case t[0] == '[':
		return "unknown[]"
	}
	return "number"
}

// propertyDoc is the comment of one property: its description and default.
func propertyDoc(s *tsSchema) string {
	doc := s.Description
	if len(s.Default) > 0 {
		if doc != "" {
			doc += " "
		}
		doc += "(default: " + string(s.Default) + ")"
	}
	return doc
}

// sentenceEnd is the index of the period ending text's first sentence, or
// -1: a ". " not after an abbreviation such as "e.g.".
func sentenceEnd(text string) int {
	for i := 0; i+1 < len(text); i++ {
		if text[i] == '.' && text[i+1] == ' ' && !strings.HasSuffix(text[:i], "e.g") && !strings.HasSuffix(text[:i], "i.e") {
			return i
		}
	}
	return -1
}

// maxShortDescription bounds the description of a compact discover hit.
const maxShortDescription = 100

// ShortDescription is a tool description as a compact discover hit carries
// it: its first sentences up to maxShortDescription bytes, on one line; a
// first sentence longer than that is cut after a word, never inside one.
func ShortDescription(desc string) string {
	desc = strings.Join(strings.Fields(desc), " ")
	if len(desc) <= maxShortDescription {
		return desc
	}
	cut := textcut.Prefix(desc, maxShortDescription)
	if i := strings.LastIndex(cut, ". "); i > 0 {
		return cut[:i+1]
	}
	return strings.TrimRight(textcut.Words(desc, maxShortDescription-3), " ,;:") + "..."
}

// ArgDoc is what argument arg of the tool info is for: the first sentence
// of its property's description in the input schema, cut as a compact
// declaration cuts it; "" when it has none.
func ArgDoc(info Info, arg string) string {
	var s struct {
		Properties map[string]struct {
			Description string `json:"description"`
		} `json:"properties"`
	}
	if json.Unmarshal(info.InputSchema, &s) != nil {
		return ""
	}
	return shortDoc(s.Properties[arg].Description)
}

// shortDoc is the first sentence of doc on one line, cut after a word to
// maxShortDoc bytes with an ellipsis.
func shortDoc(doc string) string {
	doc = strings.Join(strings.Fields(doc), " ")
	if i := sentenceEnd(doc); i >= 0 {
		doc = doc[:i+1]
	}
	if len(doc) > maxShortDoc {
		doc = strings.TrimRight(textcut.Words(doc, maxShortDoc-3), " ,;:") + "..."
	}
	return doc
}

func (r renderer) lookupRef(ref string) *tsSchema {
	for _, p := range []struct {
		prefix string
		defs   map[string]*tsSchema
	}{{"#/$defs/", r.root.Defs}, {"#/definitions/", r.root.Definitions}} {
		if name, ok := strings.CutPrefix(ref, p.prefix); ok {
			return p.defs[unescapePointer(name)]
		}
	}
	if ref == "#" {
		return r.root
	}
	return nil
}

func propertyKey(name string) string {
	if identRE.MatchString(name) {
		return name
	}
	return jsString(name)
}

// literal renders a JSON value as a TypeScript literal type; JSON strings,
// numbers, booleans and null are already valid TypeScript.
func literal(v json.RawMessage) string {
	var x any
	if err := json.Unmarshal(v, &x); err != nil {
		return "unknown"
	}
	switch x.(type) {
	case string, float64, bool, nil:
		out, _ := json.Marshal(x)
		return string(out)
	}
	return "unknown"
}

// union joins types with " | ", dropping duplicates and collapsing to
// unknown when any member is unknown.
func union(parts []string) string {
	var out []string
	for _, p := range parts {
		if p == "unknown" {
			return "unknown"
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return strings.Join(out, " | ")
}

// wrapComposite parenthesises a union or intersection so a following "[]" or
// " & " applies to the whole type.
func wrapComposite(t string) string {
	if topLevelComposite(t) {
		return "(" + t + ")"
	}
	return t
}

// topLevelComposite reports whether t has a " | " or " & " outside any
// brackets and string literals.
func topLevelComposite(t string) bool {
	depth := 0
	inString := false
	for i := 0; i < len(t); i++ {
		c := t[i]
		switch {
		case inString:
			if c == '\\' {
				i++
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[' || c == '(' || c == '<':
			depth++
		case c == '}' || c == ']' || c == ')' || c == '>':
			depth--
		case depth == 0 && (c == '|' || c == '&') && i > 0 && t[i-1] == ' ':
			return true
		}
	}
	return false
}

// writeDocComment writes text as a /** */ comment at indent, one line per
// line of text; nothing for empty text.
func writeDocComment(b *strings.Builder, indent, text string) {
	text = strings.TrimSpace(strings.ReplaceAll(text, "*/", "*\\/"))
	if text == "" {
		return
	}
	lines := strings.Split(text, "\n")
	if len(lines) == 1 {
		b.WriteString(indent + "/** " + lines[0] + " */\n")
		return
	}
	b.WriteString(indent + "/**\n")
	for _, l := range lines {
		b.WriteString(strings.TrimRight(indent+" * "+strings.TrimSpace(l), " ") + "\n")
	}
	b.WriteString(indent + " */\n")
}
