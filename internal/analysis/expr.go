package analysis

import (
	"slices"
	"strconv"

	"github.com/tdewolff/parse/v2/js"
)

// eval evaluates an expression whose value is used as a plain value.
func (b *builder) eval(e js.IExpr) val {
	v := b.evalExpr(e)
	b.escape(v)
	return v
}

// evalCond evaluates a tested expression: an args property tested for
// truthiness is optional.
func (b *builder) evalCond(e js.IExpr) val {
	v := b.evalExpr(e)
	if v.isArgsPath() {
		b.argNode(v.path).optional = true
	}
	b.escape(v)
	return v
}

// evalExpr evaluates e and returns what is known about its value, recording
// tasks, tools and dynamic accesses on the way. The caller decides whether
// the value escapes (see eval).
func (b *builder) evalExpr(e js.IExpr) val {
	switch e := e.(type) {
	case nil:
		return val{}
	case *js.Var:
		return b.variable(e)
	case *js.LiteralExpr:
		if e.TokenType == js.ThisToken {
			return val{global: true} // `this` may be globalThis in sloppy code
		}
		return val{}
	case *js.GroupExpr:
		return b.evalExpr(e.X)
	case *js.DotExpr:
		return b.member(b.evalExpr(e.X), dotName(e), e.Optional)
	case *js.IndexExpr:
		return b.index(e)
	case *js.CallExpr:
		return b.call(e)
	case *js.NewExpr:
		return b.newExpr(e)
	case *js.UnaryExpr:
		return b.unary(e)
	case *js.BinaryExpr:
		return b.binary(e)
	case *js.CondExpr:
		c := b.evalCond(e.Cond)
		d := b.open(NodeDecision, "ternary", c.taint, "", e.Cond)
		var x, y val
		b.within(d, "true", c.taint, func() { x = b.eval(e.X) })
		b.within(d, "false", c.taint, func() { y = b.eval(e.Y) })
		return val{taint: c.taint.union(x.taint).union(y.taint)}
	case *js.ObjectExpr:
		return b.object(e)
	case *js.ArrayExpr:
		return b.array(e)
	case *js.TemplateExpr:
		var v val
		if e.Tag != nil {
			v = b.eval(e.Tag)
		}
		for _, p := range e.List {
			v.taint = v.taint.union(b.eval(p.Expr).taint)
		}
		return val{taint: v.taint}
	case *js.ArrowFunc:
		return val{fn: b.declaredFunc(e, e.Params, &e.Body)}
	case *js.FuncDecl:
		return val{fn: b.declaredFunc(e, e.Params, &e.Body)}
	case *js.ClassDecl:
		b.class(e)
		return val{}
	case *js.CommaExpr:
		var v val
		for i, x := range e.List {
			if i == len(e.List)-1 {
				return b.evalExpr(x)
			}
			v.taint = v.taint.union(b.eval(x).taint)
		}
		return v
	case *js.YieldExpr:
		return val{taint: b.eval(e.X).taint}
	case *js.ImportMetaExpr:
		b.imports = true
		return val{}
	case *js.VarDecl:
		b.varDecl(e)
		return val{}
	}
	return val{}
}

// newExpr evaluates `new X(...)`. A function argument runs as a callback
// whose calls feed the new object, as in
// `new Promise(async (resolve) => resolve(await mcp.a.b()))`.
func (b *builder) newExpr(e *js.NewExpr) val {
	v := val{taint: b.eval(e.X).taint}
	if e.Args == nil {
		return v
	}
	for _, a := range e.Args.List {
		fn, params, body := funcLiteral(a.Value)
		if fn == nil {
			v.taint = v.taint.union(b.eval(a.Value).taint)
			continue
		}
		first := len(b.tasks)
		v.taint = v.taint.union(b.callback(fn, params, body, nil))
		for _, t := range b.tasks[first:] {
			v.taint = v.taint.union(symset{t.sym})
		}
	}
	return v
}

// variable is the value of a variable reference.
func (b *builder) variable(v *js.Var) val {
	v = canon(v)
	if v == b.argsVar {
		b.argsRefs++
		return val{args: true}
	}
	if known, ok := b.vars[v]; ok {
		return known
	}
	if v.Decl != js.NoDecl {
		return val{}
	}
	switch string(v.Data) {
	case "mcp":
		return val{mcp: mcpRoot}
	case "globalThis", "self", "window", "global":
		return val{global: true}
	case "eval", "Function":
		b.dynamic = true // code built at run time can call anything
	}
	return val{}
}

// member is the value of x.name.
func (b *builder) member(x val, name string, optional bool) val {
	if name == "constructor" {
		b.dynamic = true // (() => {}).constructor is Function: code from strings
	}
	switch {
	case x.mcp == mcpRoot:
		return val{mcp: mcpNS, ns: name}
	case x.mcp == mcpNS:
		b.useTool(x.ns + ":" + name)
		return val{mcp: mcpTool, ns: x.ns, action: name}
	case x.mcp == mcpTool:
		return val{}
	case x.global:
		if name == "mcp" {
			return val{mcp: mcpRoot}
		}
		return val{}
	case x.args:
		if len(x.path) == 0 {
			b.argsReads++
		}
		if optional && len(x.path) > 0 {
			b.argNode(x.path).optional = true
		}
		if name == "length" {
			return val{}
		}
		path := append(x.path[:len(x.path):len(x.path)], name)
		b.argNode(path).read = true
		return val{args: true, path: path}
	}
	out := val{taint: x.taint}
	if x.ref != "" {
		out.ref = x.ref + "." + name
	}
	return out
}

// index is the value of x[y].
func (b *builder) index(e *js.IndexExpr) val {
	x := b.evalExpr(e.X)
	if key, ok := stringKey(e.Y); ok {
		return b.member(x, key, e.Optional)
	}
	if i, ok := arrayIndex(e.Y); ok {
		return b.element(x, i)
	}
	k := b.eval(e.Y)
	switch {
	case x.mcp == mcpRoot || x.mcp == mcpNS || x.global:
		b.dynamic = true
	case x.args:
		b.argNode(x.path) // used beyond what we can list: the schema stays open
	}
	return val{taint: x.taint.union(k.taint)}
}

// arrayIndex returns the value of a literal array index.
func arrayIndex(e js.IExpr) (int, bool) {
	l, ok := e.(*js.LiteralExpr)
	if !ok || !js.IsNumeric(l.TokenType) {
		return 0, false
	}
	v, ok := parseNumber(string(l.Data))
	if !ok {
		return 0, false
	}
	f := v.(float64)
	if f < 0 || f != float64(int(f)) || f > 1<<31 {
		return 0, false
	}
	return int(f), true
}

// element is the value of x[i].
func (b *builder) element(x val, i int) val {
	switch {
	case x.mcp != mcpNone || x.global:
		b.dynamic = true
		return val{}
	case x.args:
		if len(x.path) > 0 {
			b.argNode(x.path).hint("array")
		} else {
			b.argNode(nil) // used beyond what we can list: the schema stays open
		}
		return val{}
	case i < len(x.elems):
		return x.elems[i]
	}
	out := val{taint: x.taint}
	if x.ref != "" {
		out.ref = x.ref + "[" + strconv.Itoa(i) + "]"
	}
	return out
}

func (b *builder) unary(e *js.UnaryExpr) val {
	switch e.Op {
	case js.AwaitToken:
		return b.evalExpr(e.X) // a promise and its result carry the same data
	case js.TypeofToken:
		x := b.evalExpr(e.X) // typeof mcp.fs.read is a harmless probe
		if x.isArgsPath() {
			return val{typeofArgs: true, path: x.path}
		}
		return val{taint: x.taint}
	case js.NotToken:
		return val{taint: b.evalCond(e.X).taint}
	case js.NegToken, js.PosToken, js.BitNotToken:
		x := b.eval(e.X)
		if x.isArgsPath() {
			b.argNode(x.path).hint("number")
		}
		return val{taint: x.taint}
	case js.PreIncrToken, js.PreDecrToken, js.PostIncrToken, js.PostDecrToken:
		return val{taint: b.eval(e.X).taint}
	}
	return val{taint: b.eval(e.X).taint}
}

// object evaluates an object literal; its value derives from all its parts.
func (b *builder) object(o *js.ObjectExpr) val {
	var v val
	for _, p := range o.List {
		if p.Name != nil && p.Name.Computed != nil {
			v.taint = v.taint.union(b.eval(p.Name.Computed).taint)
		}
		if m, ok := p.Value.(*js.MethodDecl); ok {
			b.declaredFunc(m, m.Params, &m.Body)
			continue
		}
		v.taint = v.taint.union(b.eval(p.Value).taint)
		if p.Init != nil {
			v.taint = v.taint.union(b.eval(p.Init).taint)
		}
	}
	return v
}

// array evaluates an array literal, keeping each element's value so that
// destructuring and indexing stay precise.
func (b *builder) array(a *js.ArrayExpr) val {
	var v val
	spread := false
	for _, el := range a.List {
		x := b.eval(el.Value)
		v.taint = v.taint.union(x.taint)
		spread = spread || el.Spread
		v.elems = append(v.elems, val{taint: x.taint, ref: x.ref})
	}
	if spread {
		v.elems = nil
	}
	return v
}

// assign records `target = v`.
func (b *builder) assign(target js.IExpr, v val) {
	switch t := target.(type) {
	case *js.Var:
		b.setVar(canon(t), v, false)
	case *js.GroupExpr:
		b.assign(t.X, v)
	case *js.DotExpr, *js.IndexExpr:
		b.mutate(target, v.taint)
	case *js.ArrayExpr:
		for i, el := range t.List {
			if el.Value == nil {
				continue
			}
			if el.Spread {
				b.assign(el.Value, val{taint: v.taint})
				continue
			}
			b.assign(el.Value, b.element(v, i))
		}
	case *js.ObjectExpr:
		for _, p := range t.List {
			sub := val{taint: v.taint}
			if p.Name != nil && !p.Spread {
				if name, ok := propertyName(*p.Name); ok {
					sub = b.member(v, name, false)
				} else {
					b.eval(p.Name.Computed)
				}
			}
			if p.Init != nil {
				sub.taint = sub.taint.union(b.eval(p.Init).taint)
			}
			b.assign(p.Value, sub)
		}
	case *js.BinaryExpr:
		if t.Op == js.EqToken { // a default in a destructuring pattern
			d := b.eval(t.Y)
			v.taint = v.taint.union(d.taint)
			b.assign(t.X, v)
		}
	}
}

// mutate records that the object at the root of target (a.b[c]) now holds
// data derived from taint, as in `acc.items = r` or `acc.push(r)`.
func (b *builder) mutate(target js.IExpr, taint symset) {
	root := target
	for {
		switch r := root.(type) {
		case *js.DotExpr:
			root = r.X
			continue
		case *js.IndexExpr:
			if _, ok := stringKey(r.Y); !ok {
				taint = taint.union(b.eval(r.Y).taint)
			}
			root = r.X
			continue
		case *js.GroupExpr:
			root = r.X
			continue
		case *js.Var:
			x := b.variable(r)
			if x.mcp != mcpNone || x.global {
				b.dynamic = true // rewriting mcp is not something we can follow
			}
			if len(taint) > 0 && !x.args {
				b.setVar(canon(r), val{taint: taint}, true)
			}
		}
		return
	}
}

// setVar records a variable's value: it replaces what the variable held
// (regions merge the values a branch or a loop body may have replaced), or,
// for a mutation, adds to it.
func (b *builder) setVar(v *js.Var, nv val, mutation bool) {
	if v == b.argsVar {
		return
	}
	if nv.mcp == mcpRoot || nv.mcp == mcpNS || nv.global {
		b.dynamic = true // an alias of mcp: it can go anywhere
	}
	old := b.vars[v]
	// A block-scoped declaration is invisible outside the region it runs
	// in: nothing to merge when the region ends.
	local := v.Decl == js.LexicalDecl || v.Decl == js.ArgumentDecl || v.Decl == js.CatchDecl
	if n := len(b.regions); n > 0 && !(local && old.empty()) {
		if b.regions[n-1] == nil {
			b.regions[n-1] = map[*js.Var]val{}
		}
		if _, logged := b.regions[n-1][v]; !logged {
			b.regions[n-1][v] = old
		}
	}
	if mutation {
		nv = mergeVals(old, nv)
	}
	b.vars[v] = nv
}

// enterRegion starts code that may run or not (a branch, a loop body, a
// function body): the variables it sets are merged with their previous
// values when it ends.
func (b *builder) enterRegion() { b.regions = append(b.regions, nil) }

func (b *builder) exitRegion() {
	n := len(b.regions)
	log := b.regions[n-1]
	b.regions = b.regions[:n-1]
	for v, before := range log {
		b.vars[v] = mergeVals(before, b.vars[v])
		if n > 1 { // the enclosing region must restore what it saw first
			if b.regions[n-2] == nil {
				b.regions[n-2] = map[*js.Var]val{}
			}
			if _, logged := b.regions[n-2][v]; !logged {
				b.regions[n-2][v] = before
			}
		}
	}
}

// mergeVals is a value that may be a or b.
func mergeVals(a, b val) val {
	switch {
	case a.empty():
		return b
	case b.empty():
		return a
	}
	out := val{taint: a.taint.union(b.taint), fn: b.fn}
	if a.ref == b.ref {
		out.ref = a.ref
	}
	if out.fn == nil {
		out.fn = a.fn
	}
	if a.mcp == b.mcp && a.ns == b.ns && a.action == b.action {
		out.mcp, out.ns, out.action = a.mcp, a.ns, a.action
	}
	if a.args && b.args && slices.Equal(a.path, b.path) {
		out.args, out.path = true, a.path
	}
	return out
}

func (v val) empty() bool {
	return len(v.taint) == 0 && v.ref == "" && v.mcp == mcpNone && !v.global && !v.args && v.fn == nil
}
