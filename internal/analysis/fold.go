package analysis

import (
	"math"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/tdewolff/parse/v2"
	"github.com/tdewolff/parse/v2/js"
)

// Folded is a string that code builds from constants: what the secret and
// personal-data rules must see when a capability is learned or shared,
// since a secret or an address written in parts passes a check of the
// code's text (docs/security.md "Tenants and names").
//
// The forms folded are the concatenation of strings (`"sk_live_" + "51H"`),
// template literals, `[…].join(sep)` of an array literal,
// `String.fromCharCode(…)` and `String.fromCodePoint(…)` of numbers, and
// `const` names bound to any of these, nested in any way.
type Folded struct {
	// Text is the string, each part that is not constant (a variable, a
	// call) written as FoldPlaceholder, or as nothing inside a URL's user
	// information (`://${user}:${password}@host`), so that a built address
	// reads as one (`${user}@corp.example` is "x@corp.example") while a URL
	// taking its credentials from arguments does not.
	Text string
	// Parts are the runs of Text between the parts that are not constant:
	// the secret rules are asked about these alone, since a placeholder
	// next to "Bearer " would read as a credential. One part, equal to
	// Text, when the whole string is constant.
	Parts []string
	// Line is where the expression starts in the user's code, 1-based.
	Line int
}

// FoldPlaceholder stands for a part of a folded string that is not a
// constant: a short name, as an e-mail's local part or a host would be.
const FoldPlaceholder = "x"

// Constant reports whether every part of f is constant.
func (f Folded) Constant() bool { return len(f.Parts) == 1 && f.Parts[0] == f.Text }

// maxFoldedBytes bounds what Fold writes for one snippet: a join or a
// template can repeat a constant, and the checks that read the result cost
// time per byte.
const maxFoldedBytes = MaxCodeBytes

// Folded returns the strings a's code builds from constants (Folded), in
// source order, each outermost expression once; a string literal on its own
// is among them only when esbuild wrote it by folding (no literal of code
// has its value). code is the code a is the analysis of. Computed once per
// Analysis; nil when there are none.
func (a *Analysis) Folded(code string) []Folded {
	a.foldOnce.Do(func() {
		if mayFold(code) {
			a.folded = fold(a, code)
		}
	})
	return a.folded
}

// mayFold reports whether code can build a string from constants at all:
// by a concatenation, a template, a join or character codes, the forms fold
// reads. Most snippets use none, and learning them (on the answer's path)
// skips a parse.
func mayFold(code string) bool {
	return strings.ContainsAny(code, "+`") || strings.Contains(code, "join") || strings.Contains(code, "fromC")
}

// Fold analyses code and returns what Analysis.Folded does.
func Fold(code string) ([]Folded, error) {
	a, err := Analyze(code)
	if err != nil {
		return nil, err
	}
	return a.Folded(code), nil
}

// fold parses a.JS (esbuild's output, which has already folded plain
// concatenations of literals) and collects its folded strings. A parse
// failure or a panic over hostile input folds nothing more.
func fold(a *Analysis, code string) (out []Folded) {
	defer func() {
		if recover() != nil {
			out = nil
		}
	}()
	// One spare byte of capacity: the parser puts its NUL there instead of
	// copying, so every data slice of the AST is into src (see offset).
	src := make([]byte, len(a.JS), len(a.JS)+1)
	copy(src, a.JS)
	tree, err := js.Parse(parse.NewInputBytes(src), js.Options{})
	if err != nil {
		return nil
	}
	f := &folder{src: src, code: code, consts: map[*js.Var]string{}, lines: newLineIndex(a.JS), a: a}
	js.Walk(f, tree)
	return f.out
}

type folder struct {
	src  []byte
	code string // the user's code, to tell esbuild's folds from literals written so
	// written holds the values of code's string literals, read on the
	// first string literal of a.JS.
	written map[string]bool
	consts  map[*js.Var]string
	lines   lineIndex
	a       *Analysis
	out     []Folded
	bytes   int
}

// part is a piece of a string being folded: constant text, or a hole.
type part struct {
	text string
	hole bool
}

func (f *folder) Enter(n js.INode) js.IVisitor {
	if d, ok := n.(*js.VarDecl); ok && d.TokenType == js.ConstToken {
		// Record constants first: the walk below sees their uses later.
		for _, b := range d.List {
			v, isVar := b.Binding.(*js.Var)
			if !isVar || b.Default == nil {
				continue
			}
			if parts, ok := f.fold(b.Default, 0); ok && constant(parts) {
				f.consts[canon(v)] = joinParts(parts)
			}
		}
		return f
	}
	e, ok := n.(js.IExpr)
	if !ok {
		return f
	}
	if lit, isLit := e.(*js.LiteralExpr); isLit {
		if lit.TokenType == js.StringToken {
			if s, ok := unquoteJS(string(lit.Data)); ok && !f.isWritten(s) {
				f.add(e, []part{{text: s}}) // esbuild's fold of a concatenation
			}
		}
		return nil
	}
	if !composite(e) {
		return f
	}
	parts, ok := f.fold(e, 0)
	if !ok {
		return f
	}
	f.add(e, parts)
	if constant(parts) {
		return nil
	}
	// The holes may hold more: `${["sk_", k].join("")}`.
	return f
}

func (f *folder) Exit(js.INode) {}

// isWritten reports whether s is the value of a string literal (or of a
// template without substitutions) of the code as written.
func (f *folder) isWritten(s string) bool {
	if f.written == nil {
		f.written = map[string]bool{}
		toks, _ := significantTokens(wrapPrefix + f.code + wrapSuffix)
		for _, t := range toks {
			if v, ok := stringValue(t); ok {
				f.written[v] = true
			}
		}
	}
	return f.written[s]
}

// composite reports whether e is one of the forms folded (not a lone
// literal or name).
func composite(e js.IExpr) bool {
	switch e := e.(type) {
	case *js.BinaryExpr:
		return e.Op == js.AddToken
	case *js.TemplateExpr:
		return e.Tag == nil && len(e.List) > 0
	case *js.CallExpr:
		return joinCall(e) != nil || charCodeCall(e)
	}
	return false
}

// maxFoldDepth bounds the recursion of fold over nested expressions.
const maxFoldDepth = 64

// fold returns e as string parts; ok is false when e is not known to be a
// string (a sum of numbers, a call of anything else).
func (f *folder) fold(e js.IExpr, depth int) ([]part, bool) {
	if depth > maxFoldDepth {
		return nil, false
	}
	switch e := unparen(e).(type) {
	case *js.LiteralExpr:
		if e.TokenType == js.StringToken {
			s, ok := unquoteJS(string(e.Data))
			return []part{{text: s}}, ok
		}
	case *js.Var:
		if s, ok := f.consts[canon(e)]; ok {
			return []part{{text: s}}, true
		}
	case *js.TemplateExpr:
		if e.Tag != nil {
			return nil, false
		}
		var parts []part
		for _, p := range e.List {
			s, ok := templateChunk(p.Value)
			if !ok {
				return nil, false
			}
			parts = append(parts, part{text: s})
			parts = append(parts, f.operand(p.Expr, depth)...)
		}
		s, ok := templateChunk(e.Tail)
		if !ok {
			return nil, false
		}
		return append(parts, part{text: s}), true
	case *js.BinaryExpr:
		if e.Op != js.AddToken {
			return nil, false
		}
		l, lok := f.fold(e.X, depth+1)
		r, rok := f.fold(e.Y, depth+1)
		switch {
		case lok && rok:
			return append(l, r...), true
		case lok:
			return append(l, f.operand(e.Y, depth)...), true
		case rok:
			return append(f.operand(e.X, depth), r...), true
		}
	case *js.CallExpr:
		if arr := joinCall(e); arr != nil {
			return f.join(arr, e.Args, depth)
		}
		if charCodeCall(e) {
			return charCodes(e)
		}
	}
	return nil, false
}

// operand is e as the parts of a string it is concatenated with: its
// folded parts, a number's text, or a hole.
func (f *folder) operand(e js.IExpr, depth int) []part {
	if parts, ok := f.fold(e, depth+1); ok {
		return parts
	}
	if lit, ok := unparen(e).(*js.LiteralExpr); ok && js.IsNumeric(lit.TokenType) {
		if v, ok := parseNumber(string(lit.Data)); ok {
			return []part{{text: strconv.FormatFloat(v.(float64), 'f', -1, 64)}}
		}
	}
	return []part{{hole: true}}
}

// join folds [a, b, …].join(sep): a hole for an element that is not
// constant, "" for null or an elision, as JavaScript writes them.
func (f *folder) join(arr *js.ArrayExpr, args js.Args, depth int) ([]part, bool) {
	sep := []part{{text: ","}}
	switch len(args.List) {
	case 0:
	case 1:
		s, ok := f.fold(args.List[0].Value, depth+1)
		if args.List[0].Rest || !ok {
			return nil, false
		}
		sep = s
	default:
		return nil, false
	}
	var parts []part
	for i, el := range arr.List {
		if el.Spread {
			return nil, false
		}
		if i > 0 {
			parts = append(parts, sep...)
		}
		if el.Value == nil {
			continue
		}
		if lit, ok := el.Value.(*js.LiteralExpr); ok && lit.TokenType == js.NullToken {
			continue
		}
		parts = append(parts, f.operand(el.Value, depth)...)
	}
	return parts, true
}

// joinCall returns the array literal of `[…].join(…)`, else nil.
func joinCall(c *js.CallExpr) *js.ArrayExpr {
	d, ok := c.X.(*js.DotExpr)
	if !ok || !isName(d.Y, "join") {
		return nil
	}
	arr, _ := unparen(d.X).(*js.ArrayExpr)
	return arr
}

// charCodeCall reports whether c is String.fromCharCode(…) or
// String.fromCodePoint(…).
func charCodeCall(c *js.CallExpr) bool {
	d, ok := c.X.(*js.DotExpr)
	if !ok || !(isName(d.Y, "fromCharCode") || isName(d.Y, "fromCodePoint")) {
		return false
	}
	v, ok := d.X.(*js.Var)
	return ok && string(v.Data) == "String" && canon(v).Decl == js.NoDecl
}

// charCodes folds String.fromCharCode of numeric literals; fromCodePoint
// writes the same for every code point fromCharCode can.
func charCodes(c *js.CallExpr) ([]part, bool) {
	units := make([]uint16, 0, len(c.Args.List))
	for _, a := range c.Args.List {
		lit, ok := unparen(a.Value).(*js.LiteralExpr)
		if a.Rest || !ok || !js.IsNumeric(lit.TokenType) {
			return nil, false
		}
		v, ok := parseNumber(string(lit.Data))
		n, _ := v.(float64)
		if !ok || n < 0 || n > math.MaxUint16 || n != math.Trunc(n) {
			return nil, false
		}
		units = append(units, uint16(n))
	}
	return []part{{text: string(utf16.Decode(units))}}, true
}

func isName(e js.IExpr, name string) bool {
	switch y := e.(type) {
	case js.LiteralExpr:
		return string(y.Data) == name
	case *js.LiteralExpr:
		return string(y.Data) == name
	case *js.Var:
		return string(y.Data) == name
	}
	return false
}

// templateChunk decodes the raw text of a template part: "`abc${",
// "}abc${", "}abc`" or "`abc`".
func templateChunk(raw []byte) (string, bool) {
	s := string(raw)
	if len(s) < 2 {
		return "", false
	}
	s = s[1:]
	if strings.HasSuffix(s, "${") {
		s = s[:len(s)-2]
	} else {
		s = s[:len(s)-1]
	}
	return unquoteJS("`" + s + "`")
}

func constant(parts []part) bool {
	for _, p := range parts {
		if p.hole {
			return false
		}
	}
	return true
}

func joinParts(parts []part) string {
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.text)
	}
	return b.String()
}

// add records the folded string of e.
func (f *folder) add(e js.IExpr, parts []part) {
	var text strings.Builder
	var runs []string
	run := strings.Builder{}
	for _, p := range parts {
		if !p.hole {
			text.WriteString(p.text)
			run.WriteString(p.text)
			continue
		}
		if run.Len() > 0 {
			runs = append(runs, run.String())
			run.Reset()
		}
		if !inURLUserInfo(text.String()) {
			text.WriteString(FoldPlaceholder)
		}
	}
	if run.Len() > 0 || len(runs) == 0 {
		runs = append(runs, run.String())
	}
	if f.bytes += text.Len(); f.bytes > maxFoldedBytes {
		return
	}
	f.out = append(f.out, Folded{Text: text.String(), Parts: runs, Line: f.line(e)})
}

// inURLUserInfo reports whether text ends inside the user information of
// a URL: after "scheme://" with no '/' or '@' since.
func inURLUserInfo(text string) bool {
	i := strings.LastIndex(text, "://")
	return i >= 0 && !strings.ContainsAny(text[i+3:], "/@?# ")
}

// line is the user's line of e, from the first slice of the source it
// holds; 1 when none is found.
func (f *folder) line(e js.IExpr) int {
	off := -1
	js.Walk(firstData{f: f, off: &off}, e)
	if off < 0 {
		return 1
	}
	line, col := f.lines.position(off)
	l, _ := f.a.OriginalPosition(line, col+1)
	return l
}

// firstData finds the smallest offset into src of a literal in a node. A
// name's data is its declaration's, wherever it is used, so names do not
// count.
type firstData struct {
	f   *folder
	off *int
}

func (w firstData) Enter(n js.INode) js.IVisitor {
	var data []byte
	switch n := n.(type) {
	case *js.LiteralExpr:
		data = n.Data
	case *js.TemplateExpr:
		data = n.Tail
		if len(n.List) > 0 {
			data = n.List[0].Value
		}
	}
	if len(data) > 0 {
		p := int(reflect.ValueOf(data).Pointer() - reflect.ValueOf(w.f.src).Pointer())
		if p >= 0 && p < len(w.f.src) && (*w.off < 0 || p < *w.off) {
			*w.off = p
		}
	}
	return w
}

func (firstData) Exit(js.INode) {}
