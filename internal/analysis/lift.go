package analysis

import (
	"bytes"
	"cmp"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tdewolff/parse/v2"
	"github.com/tdewolff/parse/v2/js"
)

// Param is one input of learned code: a literal of a run lifted into
// `args.<Name>` (docs/how-it-works.md "Parameters from literals").
type Param struct {
	Name string
	// Value is the literal as JSON (string, float64, bool, []any or an
	// object of those): the run's value, the parameter's default.
	Value any
	// Arg is the tool argument the value flows into ("path"), empty for a
	// literal lifted because it varied between runs elsewhere in the code.
	Arg string
	// Tool is the tool whose argument it is, "ns:action", or "".
	Tool string
}

// MaxParams bounds the parameters Lift makes of one snippet: the literals
// past it stay in the code.
const MaxParams = 64

// Type is the parameter's JSON Schema type, from its value.
func (p Param) Type() string { return valueType(p.Value) }

// JSONValue is Value encoded as JSON.
func (p Param) JSONValue() []byte { return appendJSON(nil, p.Value) }

// Lifted is code whose run values became parameters.
type Lifted struct {
	Code   string
	Params []Param
}

// Lift rewrites code so the literal values of its run read from args
// (docs/how-it-works.md "Parameters from literals"):
//
//   - a literal (string, number, boolean, a template without
//     substitutions, an array or object of those) that is the value of a
//     property of a tool call's argument object, directly or through a
//     `const` initialised with it, becomes args.<property>;
//   - a literal anywhere else whose value differs in one of variants (code
//     of the same shape, analysis.ShapeOf) becomes a parameter too, named
//     from its context; one that is the same in every run stays, as it
//     shapes the code (a separator, a key, a constant).
//
// The rewrite replaces source ranges the parser and the tokenizer give,
// never text found by search. ok is false when nothing can be lifted
// safely: the code is not plain JavaScript, reaches tools dynamically
// (mcp[x], a computed key in a tool's arguments), or binds `args` itself.
func Lift(code string, variants ...string) (out Lifted, ok bool) {
	defer func() {
		if recover() != nil { // a walk over untrusted input costs one lift
			out, ok = Lifted{}, false
		}
	}()
	l, ok := newLifter(code)
	if !ok {
		return Lifted{}, false
	}
	for _, v := range variants {
		if !l.markVarying(v) {
			return Lifted{}, false
		}
	}
	// Tool arguments first: a literal reaching one is named after it, even
	// when it also varies.
	js.Walk(toolArgsPass{l}, l.body)
	// Varying literals are lifted in source order, so the first place a
	// value appears names its parameter and later ones derive from it.
	js.Walk(varyingPass{l}, l.body)
	slices.SortStableFunc(l.pending, func(a, b pendingLift) int { return cmp.Compare(a.off, b.off) })
	for _, p := range l.pending {
		p.lift()
	}
	if l.unsafe {
		return Lifted{}, false
	}
	return l.rewrite(), true
}

// lifter is one Lift: the code wrapped as the analysis wraps it, its AST and
// tokens, and the ranges found to lift.
type lifter struct {
	src     []byte // wrapPrefix + code + wrapSuffix; AST data slices into it
	body    *js.BlockStmt
	argsVar *js.Var
	toks    []token
	byStart map[int]int // token start offset -> index in toks
	varying map[int]bool
	// varyingList marks the lists of literals (by their '[') that differ in
	// a variant; variant holds the variant's literal token at each literal's
	// start, for relating values (derivations).
	varyingList map[int]bool
	variant     map[int]token
	consts      map[*js.Var]js.IExpr // const bindings and their initialisers
	reads       []string
	lifts       []lift
	keys        map[int]bool // start offsets of property keys, never lifted
	unsafe      bool
	// pending are the varying pass's lifts, run in source order after it.
	pending []pendingLift
}

// pendingLift is one lift the varying pass found, at offset off.
type pendingLift struct {
	off  int
	lift func()
}

// later queues lift for the literal whose source starts with data.
func (l *lifter) later(data []byte, lift func()) {
	if off := l.offset(data); off >= 0 {
		l.pending = append(l.pending, pendingLift{off, lift})
	}
}

type lift struct {
	start, end int // in src
	param      Param
	template   bool   // a template part: replaced as ${args.x}
	context    string // a name from context, for a second parameter of the same name
	// derived, when set, writes the literal as an expression of another
	// lift's parameter; it is no parameter of its own.
	derived *derivation
}

func newLifter(code string) (*lifter, bool) {
	wrapped := wrapPrefix + code + wrapSuffix
	// One spare byte of capacity: the parser puts its NUL there instead of
	// copying, so every data slice of the AST is into src (see offset).
	src := make([]byte, len(wrapped), len(wrapped)+1)
	copy(src, wrapped)
	tree, err := js.Parse(parse.NewInputBytes(src), js.Options{})
	if err != nil {
		return nil, false
	}
	fd := wrapperFunc(tree)
	if fd == nil {
		return nil, false
	}
	l := &lifter{src: src, body: &fd.Body, argsVar: canon(fd.Params.List[0].Binding.(*js.Var)),
		byStart: map[int]int{}, varying: map[int]bool{}, varyingList: map[int]bool{}, variant: map[int]token{},
		consts: map[*js.Var]js.IExpr{}, keys: map[int]bool{}}
	toks, complete := significantTokens(wrapped)
	if !complete {
		return nil, false
	}
	l.toks = toks
	for i, t := range toks {
		l.byStart[t.start] = i
	}
	js.Walk(declarations{l}, l.body)
	return l, !l.unsafe
}

// offset is where data, a slice of the AST, starts in src; -1 when it is
// not a slice of src. The parser cuts its slices to their length, so the
// offset comes from the addresses of their first bytes.
func (l *lifter) offset(data []byte) int {
	if len(data) == 0 {
		return -1
	}
	off := int(reflect.ValueOf(data).Pointer() - reflect.ValueOf(l.src).Pointer())
	if off < 0 || off+len(data) > len(l.src) || !bytes.Equal(l.src[off:off+len(data)], data) {
		return -1
	}
	return off
}

// markVarying marks the literal tokens whose value differs in variant, and
// the lists of literals that differ in any way (their length too). Strings
// and templates without substitutions compare by value, whatever their
// quotes: a value written back (Substitute) may be quoted otherwise than
// the run wrote it. A variant of another shape makes the lift unsafe.
func (l *lifter) markVarying(variant string) bool {
	vt, complete := significantTokens(wrapPrefix + variant + wrapSuffix)
	if !complete {
		return false
	}
	own, other := units(l.toks), units(vt)
	if len(own) != len(other) {
		return false
	}
	for i, a := range own {
		b := other[i]
		switch {
		case a.list != b.list:
			return false
		case a.list:
			if !bytes.Equal(a.text, b.text) {
				l.varyingList[a.tok.start] = true
			}
		case !sameKind(a.tok.tt, b.tok.tt):
			return false
		case isLiteralToken(a.tok.tt):
			l.variant[a.tok.start] = b.tok
			if !sameLiteral(a.tok, b.tok) {
				l.varying[a.tok.start] = true
			}
		}
	}
	return true
}

// sameKind reports whether two tokens stand in one place of one shape: the
// same type, or a string and a template without substitutions.
func sameKind(a, b js.TokenType) bool {
	str := func(tt js.TokenType) bool { return tt == js.StringToken || tt == js.TemplateToken }
	return a == b || str(a) && str(b) || js.IsNumeric(a) && js.IsNumeric(b)
}

// sameLiteral reports whether two literal tokens hold one value.
func sameLiteral(a, b token) bool {
	if bytes.Equal(a.text, b.text) {
		return true
	}
	va, okA := stringValue(a)
	vb, okB := stringValue(b)
	return okA && okB && va == vb
}

// stringValue is the value of a string token or of a template without
// substitutions.
func stringValue(t token) (string, bool) {
	if t.tt != js.StringToken && t.tt != js.TemplateToken {
		return "", false
	}
	return unquoteJS(string(t.text))
}

// SameLiterals reports whether a and b have the same tokens, literal values
// included, once whitespace, comments and semicolons are dropped: runs that
// differ only in how they are written.
func SameLiterals(a, b string) bool {
	ta, okA := significantTokens(a)
	tb, okB := significantTokens(b)
	return okA && okB && slices.EqualFunc(ta, tb, func(x, y token) bool {
		return x.tt == y.tt && bytes.Equal(x.text, y.text) || isLiteralToken(x.tt) && sameKind(x.tt, y.tt) && sameLiteral(x, y)
	})
}

func isLiteralToken(tt js.TokenType) bool {
	return js.IsNumeric(tt) || tt == js.StringToken || tt == js.TemplateToken ||
		tt == js.TemplateStartToken || tt == js.TemplateMiddleToken || tt == js.TemplateEndToken
}

// declarations records const bindings, the args properties the code reads,
// and whether the code binds args or reaches mcp dynamically.
type declarations struct{ l *lifter }

func (d declarations) Enter(n js.INode) js.IVisitor {
	l := d.l
	switch n := n.(type) {
	case *js.VarDecl:
		for _, el := range n.List {
			if v, ok := el.Binding.(*js.Var); ok {
				if string(v.Data) == "args" {
					l.unsafe = true
				}
				if n.TokenType == js.ConstToken && el.Default != nil {
					l.consts[canon(v)] = el.Default
				}
			}
		}
	case *js.Var:
		if string(n.Data) == "args" && canon(n) != l.argsVar {
			l.unsafe = true // a parameter or binding of its own named args
		}
	case *js.ObjectExpr:
		for _, p := range n.List {
			if p.Name != nil && !p.Name.IsComputed() {
				if off := l.offset(p.Name.Literal.Data); off >= 0 {
					l.keys[off] = true
				}
			}
		}
	case *js.DotExpr:
		if v, ok := n.X.(*js.Var); ok && canon(v) == l.argsVar {
			if name := dotName(n); name != "" && !slices.Contains(l.reads, name) {
				l.reads = append(l.reads, name)
			}
		}
	case *js.IndexExpr:
		if isMCP(n.X) || isMCPNamespace(n.X) {
			if lit, ok := unparen(n.Y).(*js.LiteralExpr); ok && lit.TokenType == js.StringToken {
				// mcp["org.project.ns"], mcp.ns["action"]: the name of the
				// tool, which stays as it is.
				if off := l.offset(lit.Data); off >= 0 {
					l.keys[off] = true
				}
			} else {
				l.unsafe = true // mcp[x], mcp.ns[x]: a computed name
			}
		}
		if v, ok := n.X.(*js.Var); ok && canon(v) == l.argsVar {
			if key, ok := stringKey(n.Y); ok && !slices.Contains(l.reads, key) {
				l.reads = append(l.reads, key)
			}
		}
	}
	return d
}

func (declarations) Exit(js.INode) {}

func isMCP(e js.IExpr) bool {
	v, ok := unparen(e).(*js.Var)
	return ok && string(v.Data) == "mcp" && canon(v).Decl == js.NoDecl
}

// isMCPNamespace reports whether e is mcp.ns or mcp["ns"].
func isMCPNamespace(e js.IExpr) bool {
	x, _, ok := memberOf(e)
	return ok && isMCP(x)
}

// memberOf splits a member read by a constant name, x.name or x["name"].
func memberOf(e js.IExpr) (x js.IExpr, name string, ok bool) {
	switch e := unparen(e).(type) {
	case *js.DotExpr:
		return e.X, dotName(e), true
	case *js.IndexExpr:
		if lit, isLit := unparen(e.Y).(*js.LiteralExpr); isLit && lit.TokenType == js.StringToken {
			name, ok = stringKey(lit)
			return e.X, name, ok
		}
	}
	return nil, "", false
}

// toolOf names the tool a callee is, "ns:action", or "": mcp.ns.action, or
// a qualified name such as mcp["org.project.ns"].action.
func toolOf(callee js.IExpr) string {
	nsExpr, action, ok := memberOf(callee)
	if !ok || !isMCPNamespace(nsExpr) {
		return ""
	}
	_, ns, _ := memberOf(nsExpr)
	return ns + ":" + action
}

// toolArgsPass lifts the literals of tool arguments.
type toolArgsPass struct{ l *lifter }

func (p toolArgsPass) Enter(n js.INode) js.IVisitor {
	if c, ok := n.(*js.CallExpr); ok {
		if tool := toolOf(c.X); tool != "" && len(c.Args.List) > 0 {
			if o, ok := unparen(c.Args.List[0].Value).(*js.ObjectExpr); ok && !c.Args.List[0].Rest {
				p.l.toolArgs(tool, o)
			}
		}
	}
	return p
}

func (toolArgsPass) Exit(js.INode) {}

// varyingPass lifts the literals that differ between runs.
type varyingPass struct{ l *lifter }

func (p varyingPass) Enter(n js.INode) js.IVisitor {
	l := p.l
	switch n := n.(type) {
	case *js.ObjectExpr:
		// A value named by its key: {name: "alice"} inside a list.
		for _, prop := range n.List {
			if prop.Name == nil || prop.Name.IsComputed() {
				continue
			}
			if lit, ok := unparen(prop.Value).(*js.LiteralExpr); ok {
				if key, ok := propertyName(*prop.Name); ok {
					l.laterVarying(lit, snake(key))
				}
			}
		}
	case *js.CallExpr:
		// An argument named by what it means to its method: the count of
		// .slice(0, 3), the suffix of name.endsWith(".md").
		if d, ok := unparen(n.X).(*js.DotExpr); ok && toolOf(n.X) == "" {
			method := dotName(d)
			for i, a := range n.Args.List {
				if lit, ok := unparen(a.Value).(*js.LiteralExpr); ok {
					l.laterVarying(lit, argMeaning(method, i, len(n.Args.List)))
				}
			}
		}
	case *js.BinaryExpr:
		// A value compared with a property or a variable is named by it:
		// r.region === "north" is region.
		if comparison(n.Op) {
			for _, side := range [][2]js.IExpr{{n.X, n.Y}, {n.Y, n.X}} {
				lit, isLit := unparen(side[0]).(*js.LiteralExpr)
				if name := operandName(side[1]); isLit && name != "" {
					l.laterVarying(lit, name)
				}
			}
		}
	case *js.ArrayExpr:
		l.laterList(n, "items")
	case *js.LiteralExpr:
		l.laterVarying(n, "value")
	case *js.VarDecl:
		for _, el := range n.List {
			if v, ok := el.Binding.(*js.Var); ok && el.Default != nil {
				switch init := unparen(el.Default).(type) {
				case *js.LiteralExpr:
					l.laterVarying(init, snake(string(v.Data)))
				case *js.ArrayExpr:
					l.laterList(init, snake(string(v.Data)))
				}
			}
		}
	case *js.TemplateExpr:
		if n.Tag == nil {
			for _, p := range n.List {
				l.later(p.Value, func() { l.liftTemplatePart(p.Value) })
			}
			l.later(n.Tail, func() { l.liftTemplatePart(n.Tail) })
		}
	}
	return p
}

func (varyingPass) Exit(js.INode) {}

// toolArgs lifts the literal values of a tool call's argument object,
// recursing into nested objects.
func (l *lifter) toolArgs(tool string, o *js.ObjectExpr) {
	for _, p := range o.List {
		if p.Spread || p.Name == nil {
			continue
		}
		if p.Name.IsComputed() {
			if _, ok := stringKey(p.Name.Computed); !ok {
				l.unsafe = true // {[k]: v}: which argument it is depends on the run
				return
			}
		}
		key, ok := propertyName(*p.Name)
		if !ok {
			continue
		}
		value := p.Value
		context := ""
		if v, isVar := unparen(value).(*js.Var); isVar {
			init, isConst := l.consts[canon(v)]
			if !isConst {
				continue
			}
			value, context = init, snake(string(v.Data))
		}
		if inner, isObj := unparen(value).(*js.ObjectExpr); isObj {
			// An object's parameters are its properties: a default written
			// back (Substitute) keeps the code's shape only for scalars and
			// arrays, whose order JSON keeps.
			l.toolArgs(tool, inner)
			continue
		}
		if l.configures(key, value) {
			continue
		}
		l.liftValue(value, Param{Name: key, Arg: key, Tool: tool}, context)
	}
}

// configures reports whether the literal e, a tool's argument key, is a
// constant that configures how the code works rather than data it works
// on, and no run varied it: it then stays in the code (docs/how-it-works.md
// "Parameters from literals"). Booleans and numbers configure (a flag, a
// limit, an accumulator's start); so does a string under a key that names a
// setting (a separator, a format, a unit, a key into a record) or of up to
// three characters of punctuation and spaces. Other strings (paths, text, queries, ids,
// URLs) are data, and arrays are lists of data.
func (l *lifter) configures(key string, e js.IExpr) bool {
	v, pure := literalValue(e)
	if !pure {
		return false
	}
	start, end, ok := l.rangeOf(e)
	if !ok || l.variesIn(start, end) {
		return false
	}
	switch x := v.(type) {
	case bool, float64:
		return true
	case string:
		if settingKeys[strings.ToLower(key)] {
			return true
		}
		// A separator or a joiner: a few characters of punctuation or space.
		return utf8.RuneCountInString(x) <= 3 && !strings.ContainsAny(x, "[]{}") &&
			strings.IndexFunc(x, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) < 0
	}
	return false
}

// variesIn reports whether a literal token in [start, end) differs between
// runs.
func (l *lifter) variesIn(start, end int) bool {
	for off := range l.varying {
		if off >= start && off < end {
			return true
		}
	}
	return false
}

// settingKeys are tool argument names whose string values say how a tool
// works, not what it works on.
var settingKeys = map[string]bool{
	"separator": true, "sep": true, "delimiter": true, "joiner": true, "glue": true,
	"search": true, "replacement": true, "flags": true,
	"format": true, "unit": true, "units": true, "encoding": true, "charset": true,
	"algorithm": true, "mode": true, "key": true, "field": true, "sort": true, "order": true,
	"locale": true, "timezone": true, "tz": true, "case": true, "style": true, "method": true,
}

// liftValue lifts e when it is a pure literal with a source range.
func (l *lifter) liftValue(e js.IExpr, p Param, context string) {
	v, pure := literalValue(e)
	if !pure || holdsObject(v) {
		return
	}
	if len(l.lifts) >= MaxParams {
		return
	}
	start, end, ok := l.rangeOf(e)
	if !ok || l.overlaps(start, end) {
		return
	}
	p.Value = v
	l.lifts = append(l.lifts, lift{start: start, end: end, param: p, context: context})
}

// liftVarying lifts a scalar literal whose value differs between runs; a
// string every run derives from a string parameter (the same, or it with a
// fixed prefix or suffix) becomes an expression of that parameter instead.
func (l *lifter) liftVarying(data []byte, tt js.TokenType, name string) {
	off := l.offset(data)
	if off < 0 || !l.varying[off] || l.keys[off] || !(js.IsNumeric(tt) || tt == js.StringToken) {
		return
	}
	if d, ok := l.derivation(off); ok {
		if !l.overlaps(off, off+len(data)) {
			l.lifts = append(l.lifts, lift{start: off, end: off + len(data), derived: &d})
		}
		return
	}
	e := &js.LiteralExpr{TokenType: tt, Data: data}
	l.liftValue(e, Param{Name: name}, "")
}

func (l *lifter) laterVarying(lit *js.LiteralExpr, name string) {
	l.later(lit.Data, func() { l.liftVarying(lit.Data, lit.TokenType, name) })
}

func (l *lifter) laterList(a *js.ArrayExpr, name string) {
	if start, _, ok := l.rangeOf(a); ok {
		l.pending = append(l.pending, pendingLift{start, func() { l.liftList(a, name) }})
	}
}

// liftList lifts a list of literals that differs between runs (in its
// values or its length) whole, as one array parameter.
func (l *lifter) liftList(a *js.ArrayExpr, name string) {
	start, _, ok := l.rangeOf(a)
	if ok && l.varyingList[start] {
		l.liftValue(a, Param{Name: name}, "")
	}
}

// derivation is a string literal written as a lifted string parameter with
// a fixed prefix and suffix around it: (args.from + suffix), (prefix +
// args.from), or args.from alone.
type derivation struct {
	from           int // start of the lift of the parameter
	prefix, suffix string
}

// derivation finds the string parameter the string literal at off is made
// of in every run (this one and the variant), if any.
func (l *lifter) derivation(off int) (derivation, bool) {
	own, ok := stringValue(l.toks[l.byStart[off]])
	if !ok {
		return derivation{}, false
	}
	other, ok := stringValue(l.variant[off])
	if !ok {
		return derivation{}, false
	}
	for _, lf := range l.lifts {
		from, isString := lf.param.Value.(string)
		if lf.derived != nil || lf.template || !isString || from == "" {
			continue
		}
		fromVariant, ok := stringValue(l.variant[lf.start])
		if !ok || fromVariant == from {
			continue // a value that did not vary relates to nothing
		}
		if i := strings.Index(own, from); i >= 0 {
			prefix, suffix := own[:i], own[i+len(from):]
			if (prefix == "" || suffix == "") && other == prefix+fromVariant+suffix {
				return derivation{from: lf.start, prefix: prefix, suffix: suffix}, true
			}
		}
	}
	return derivation{}, false
}

// comparison reports whether op compares its operands.
func comparison(op js.TokenType) bool {
	switch op {
	case js.EqEqEqToken, js.NotEqEqToken, js.EqEqToken, js.NotEqToken, js.LtToken, js.GtToken, js.LtEqToken, js.GtEqToken:
		return true
	}
	return false
}

// operandName names what a literal is compared with: a property's name, a
// variable's.
func operandName(e js.IExpr) string {
	switch x := unparen(e).(type) {
	case *js.DotExpr:
		return snake(dotName(x))
	case *js.Var:
		return snake(string(x.Data))
	}
	return ""
}

// argMeaning names the i-th of n literal arguments of a method call by what
// it means to the method; other methods name it after themselves.
func argMeaning(method string, i, n int) string {
	switch method {
	case "slice", "substring", "substr":
		if i == 0 && n == 1 {
			return "start"
		}
		if i == 1 {
			return "count"
		}
		return "start"
	case "padStart", "padEnd":
		return [2]string{"length", "pad"}[min(i, 1)]
	case "replace", "replaceAll":
		return [2]string{"pattern", "replacement"}[min(i, 1)]
	case "repeat":
		return "count"
	case "toFixed", "toPrecision":
		return "digits"
	case "split", "join":
		return "separator"
	case "startsWith":
		return "prefix"
	case "endsWith":
		return "suffix"
	case "includes", "indexOf", "lastIndexOf":
		return "search"
	case "at":
		return "index"
	}
	return snake(method)
}

// liftTemplatePart lifts the text of a template part (between ` or } and ${
// or `) whose value differs between runs.
func (l *lifter) liftTemplatePart(raw []byte) {
	off := l.offset(raw)
	if off < 0 || !l.varying[off] || len(raw) < 2 || len(l.lifts) >= MaxParams || l.overlaps(off, off+len(raw)) {
		return
	}
	i, ok := l.byStart[off]
	if !ok {
		return
	}
	tt := l.toks[i].tt
	start, end := off+1, off+len(raw)-1 // after ` or }
	if tt == js.TemplateStartToken || tt == js.TemplateMiddleToken {
		end = off + len(raw) - 2 // before ${
	}
	if end < start {
		return
	}
	text, ok := unquoteJS("`" + string(l.src[start:end]) + "`")
	if !ok {
		return
	}
	l.lifts = append(l.lifts, lift{start: start, end: end, param: Param{Name: "text", Value: text}, template: true})
}

// overlaps reports whether [start, end) meets a range already lifted.
func (l *lifter) overlaps(start, end int) bool {
	for _, lf := range l.lifts {
		if start < lf.end && lf.start < end {
			return true
		}
	}
	return false
}

func holdsObject(v any) bool {
	switch x := v.(type) {
	case object:
		return true
	case []any:
		return slices.ContainsFunc(x, holdsObject)
	}
	return false
}

// rangeOf is the source range of a literal expression: its token for a
// scalar, its sign and token for a signed number, from its opening to its
// matching closing bracket for an array (Lift lifts no object whole).
func (l *lifter) rangeOf(e js.IExpr) (start, end int, ok bool) {
	switch e := unparen(e).(type) {
	case *js.LiteralExpr:
		return l.tokenRange(e.Data)
	case *js.TemplateExpr:
		return l.tokenRange(e.Tail)
	case *js.UnaryExpr:
		lit, isLit := e.X.(*js.LiteralExpr)
		if !isLit {
			return 0, 0, false
		}
		s, end, ok := l.tokenRange(lit.Data)
		i := l.byStart[s]
		if !ok || i == 0 {
			return 0, 0, false
		}
		return l.toks[i-1].start, end, true
	case *js.ArrayExpr:
		// From the first scalar, through the brackets of the nested
		// arrays it opens, back to e's own bracket; then to its match.
		first, depth, ok := firstScalar(e)
		if !ok {
			return 0, 0, false
		}
		s, _, ok := l.tokenRange(first)
		open := l.byStart[s] - depth
		if !ok || open < 0 || !isOpen(l.toks[open].tt) {
			return 0, 0, false
		}
		close := matching(l.toks, open)
		if close < 0 {
			return 0, 0, false
		}
		return l.toks[open].start, l.toks[close].start + len(l.toks[close].text), true
	}
	return 0, 0, false
}

func (l *lifter) tokenRange(data []byte) (int, int, bool) {
	off := l.offset(data)
	if off < 0 {
		return 0, 0, false
	}
	if _, ok := l.byStart[off]; !ok {
		return 0, 0, false
	}
	return off, off + len(data), true
}

// firstScalar is the source of the first token of an array's first
// scalar, and how many brackets open before it.
func firstScalar(a *js.ArrayExpr) (data []byte, depth int, ok bool) {
	for depth = 1; ; depth++ {
		if len(a.List) == 0 || a.List[0].Value == nil {
			return nil, 0, false
		}
		switch x := unparen(a.List[0].Value).(type) {
		case *js.ArrayExpr:
			a = x
		case *js.LiteralExpr:
			return x.Data, depth, true
		case *js.TemplateExpr:
			return x.Tail, depth, true
		default:
			return nil, 0, false // a signed number or an object: not placed
		}
	}
}

func isOpen(tt js.TokenType) bool { return tt == js.OpenBracketToken }

// matching is the index of the bracket closing toks[open], or -1.
func matching(toks []token, open int) int {
	depth := 0
	for i := open; i < len(toks); i++ {
		switch toks[i].tt {
		case js.OpenBracketToken, js.OpenBraceToken, js.OpenParenToken, js.TemplateStartToken:
			depth++
		case js.CloseBracketToken, js.CloseBraceToken, js.CloseParenToken, js.TemplateEndToken:
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// rewrite names the parameters and writes the code with each lifted range
// replaced by its args read.
func (l *lifter) rewrite() Lifted {
	slices.SortFunc(l.lifts, func(a, b lift) int { return cmp.Compare(a.start, b.start) })
	used := map[string]bool{}
	for _, r := range l.reads {
		used[r] = true // the code's own args keep their names
	}
	params := make([]Param, 0, len(l.lifts))
	nameAt := map[int]string{}
	for i := range l.lifts {
		lf := &l.lifts[i]
		if lf.derived != nil {
			continue
		}
		name := paramName(lf.param.Name, lf.context, used)
		used[name] = true
		lf.param.Name = name
		nameAt[lf.start] = name
		params = append(params, lf.param)
	}
	var b strings.Builder
	code := l.src[len(wrapPrefix) : len(l.src)-len(wrapSuffix)]
	pos := len(wrapPrefix)
	for _, lf := range l.lifts {
		b.Write(l.src[pos:lf.start])
		read := argsRead(lf.param.Name)
		switch d := lf.derived; {
		case d != nil:
			read = derivedRead(argsRead(nameAt[d.from]), d)
		case lf.template:
			read = "${" + read + "}"
		}
		b.WriteString(read)
		pos = lf.end
	}
	b.Write(l.src[pos : len(wrapPrefix)+len(code)])
	return Lifted{Code: b.String(), Params: params}
}

// paramName is base made a unique identifier: the context's name when base
// is taken, else base_2, base_3, ...
func paramName(base, context string, used map[string]bool) string {
	base = snake(base)
	if base == "" {
		base = "value"
	}
	if !used[base] {
		return base
	}
	if context != "" && !used[context] {
		return context
	}
	for i := 2; ; i++ {
		if n := base + "_" + strconv.Itoa(i); !used[n] {
			return n
		}
	}
}

func argsRead(name string) string {
	return "args." + name
}

// derivedRead writes a derived literal as an expression of read, in the
// one form Substitute folds back into the literal.
func derivedRead(read string, d *derivation) string {
	switch {
	case d.prefix != "":
		return "(" + string(appendJSON(nil, d.prefix)) + " + " + read + ")"
	case d.suffix != "":
		return "(" + read + " + " + string(appendJSON(nil, d.suffix)) + ")"
	}
	return read
}

// snake turns a property or variable name into a snake_case identifier:
// "inputFile" -> "input_file", "max-items" -> "max_items".
func snake(s string) string {
	var b strings.Builder
	var prev rune
	for _, r := range s {
		switch {
		case unicode.IsUpper(r) && (unicode.IsLower(prev) || unicode.IsDigit(prev)):
			b.WriteByte('_')
			b.WriteRune(unicode.ToLower(r))
		case r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			b.WriteRune(unicode.ToLower(r))
		case b.Len() > 0 && prev != '_':
			r = '_'
			b.WriteByte('_')
		default:
			continue
		}
		prev = r
	}
	out := strings.Trim(b.String(), "_")
	if out != "" && out[0] >= '0' && out[0] <= '9' {
		out = "p_" + out
	}
	return out
}

// Substitute writes values back into code in place of the args reads Lift
// made (args.name, and ${args.name} in a template): the run that lifted code
// came from, for comparing with another run of its shape. ok is false when
// code does not parse.
func Substitute(code string, values map[string]any) (string, bool) {
	l, ok := newLifter(code)
	if !ok {
		return "", false
	}
	var edits []edit
	for i := 2; i < len(l.toks); i++ {
		t := l.toks[i]
		v, named := values[string(t.text)]
		// A keyword is a property name too: args.from, args.default.
		if !named || !identifierName(t.text) || l.toks[i-1].tt != js.DotToken ||
			string(l.toks[i-2].text) != "args" || l.toks[i-2].tt != js.IdentifierToken {
			continue
		}
		if i >= 3 && i+1 < len(l.toks) && isTemplateOpen(l.toks[i-3].tt) && isTemplateClose(l.toks[i+1].tt) {
			s, isString := v.(string)
			if !isString {
				continue
			}
			open, close := l.toks[i-3], l.toks[i+1]
			edits = append(edits, edit{open.start + len(open.text) - 2, close.start + 1, templateText(s)})
			continue
		}
		if i >= 3 && l.toks[i-3].tt == js.DotToken {
			continue // x.args.name is not a read of args
		}
		if e, ok := l.foldDerived(i, v); ok {
			edits = append(edits, e)
			continue
		}
		if _, isObject := v.(map[string]any); isObject {
			continue // Lift never makes one
		}
		text := string(appendJSON(nil, v))
		edits = append(edits, edit{l.toks[i-2].start, t.start + len(t.text), text})
	}
	var b strings.Builder
	pos := len(wrapPrefix)
	for _, e := range edits {
		b.Write(l.src[pos:e.start])
		b.WriteString(e.text)
		pos = e.end
	}
	b.Write(l.src[pos : len(l.src)-len(wrapSuffix)])
	return b.String(), true
}

// identifierName reports whether text is an IdentifierName of ASCII
// letters, digits, '_' and '$' (the names Lift writes).
func identifierName(text []byte) bool {
	for i, c := range text {
		if !(c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return len(text) > 0
}

// edit replaces src[start:end] with text.
type edit struct {
	start, end int
	text       string
}

// foldDerived is the edit that writes a derived literal (derivedRead) back
// as the one literal it was, for the args read at token i holding v.
func (l *lifter) foldDerived(i int, v any) (edit, bool) {
	s, isString := v.(string)
	t := l.toks
	if !isString {
		return edit{}, false
	}
	if i >= 3 && i+3 < len(t) && t[i-3].tt == js.OpenParenToken && t[i+1].tt == js.AddToken &&
		t[i+2].tt == js.StringToken && t[i+3].tt == js.CloseParenToken {
		if suffix, ok := unquoteJS(string(t[i+2].text)); ok {
			return edit{t[i-3].start, t[i+3].start + 1, string(appendJSON(nil, s+suffix))}, true
		}
	}
	if i >= 5 && i+1 < len(t) && t[i-5].tt == js.OpenParenToken && t[i-4].tt == js.StringToken &&
		t[i-3].tt == js.AddToken && t[i+1].tt == js.CloseParenToken {
		if prefix, ok := unquoteJS(string(t[i-4].text)); ok {
			return edit{t[i-5].start, t[i+1].start + 1, string(appendJSON(nil, prefix+s))}, true
		}
	}
	return edit{}, false
}

// GivesBack reports whether lifted code, with the values of params written
// back (Substitute), is run's code token for token, values included: what
// a capability may claim of a run it keeps as an example.
func GivesBack(lifted string, params []Param, run string) bool {
	values := make(map[string]any, len(params))
	for _, p := range params {
		values[p.Name] = p.Value
	}
	back, ok := Substitute(lifted, values)
	return ok && SameLiterals(back, run)
}

func isTemplateOpen(tt js.TokenType) bool {
	return tt == js.TemplateStartToken || tt == js.TemplateMiddleToken
}

func isTemplateClose(tt js.TokenType) bool {
	return tt == js.TemplateMiddleToken || tt == js.TemplateEndToken
}

// templateText escapes s as the raw text of a template literal.
func templateText(s string) string {
	s = strings.ReplaceAll(s, `\`, `\\`)
	s = strings.ReplaceAll(s, "`", "\\`")
	return strings.ReplaceAll(s, "${", "\\${")
}
