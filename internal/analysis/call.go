package analysis

import (
	"github.com/tdewolff/parse/v2/js"
)

// iterationMethods call their function argument once per element.
var iterationMethods = map[string]bool{
	"map": true, "forEach": true, "flatMap": true, "filter": true, "reduce": true, "reduceRight": true,
	"some": true, "every": true, "find": true, "findIndex": true, "findLast": true, "findLastIndex": true,
	"toSorted": true, "sort": true,
}

// promiseCombinators run their array of promises concurrently.
var promiseCombinators = map[string]bool{"all": true, "allSettled": true, "race": true, "any": true}

// Method names that tell the type of the receiver, for args properties.
var (
	stringMethods = map[string]bool{
		"toUpperCase": true, "toLowerCase": true, "trim": true, "trimStart": true, "trimEnd": true,
		"split": true, "startsWith": true, "endsWith": true, "padStart": true, "padEnd": true,
		"replace": true, "replaceAll": true, "charAt": true, "charCodeAt": true, "match": true,
		"matchAll": true, "localeCompare": true, "normalize": true, "substring": true, "repeat": true,
	}
	arrayMethods = map[string]bool{
		"map": true, "forEach": true, "flatMap": true, "filter": true, "reduce": true, "reduceRight": true,
		"some": true, "every": true, "find": true, "findIndex": true, "findLast": true, "findLastIndex": true,
		"join": true, "push": true, "pop": true, "shift": true, "unshift": true, "flat": true,
		"sort": true, "toSorted": true, "reverse": true, "toReversed": true, "splice": true, "entries": true,
	}
	numberMethods = map[string]bool{"toFixed": true, "toPrecision": true, "toExponential": true}
)

// call evaluates a call expression.
func (b *builder) call(c *js.CallExpr) val {
	if lit, ok := c.X.(*js.LiteralExpr); ok && lit.TokenType == js.ImportToken {
		b.imports = true
		b.evalArgs(c.Args)
		return val{}
	}
	var callee, recv val
	method, hasRecv := "", false
	dot, _ := unparen(c.X).(*js.DotExpr)
	switch {
	case dot != nil:
		recv, method, hasRecv = b.evalExpr(dot.X), dotName(dot), true
		if recv.args {
			// args is JSON: a method call on it is never a property read.
			if t := methodType(method); t != "" && len(recv.path) > 0 {
				b.argNode(recv.path).hint(t)
			} else if len(recv.path) == 0 {
				b.argNode(nil) // used beyond what we can list: the schema stays open
			}
		} else {
			callee = b.member(recv, method, dot.Optional)
		}
	default:
		callee = b.evalExpr(c.X)
	}

	switch {
	case callee.mcp == mcpTool:
		return b.toolCall(callee.ns+":"+callee.action, c)
	case callee.mcp != mcpNone || callee.global:
		b.dynamic = true // mcp(...) or mcp.ns(...): nothing we can name
	case hasRecv && promiseCombinators[method] && isGlobal(dot.X, "Promise"):
		return b.fork(method, c)
	case hasRecv && iterationMethods[method] && hasFuncArg(c.Args):
		return b.iterate(method, recv, dot.X, c)
	case callee.fn != nil:
		return b.localCall(callee.fn, c)
	}

	// Any other call: callbacks receive what the receiver and the other
	// arguments hold, the result derives from all of it.
	argsTaint := b.evalArgs(c.Args)
	param := val{taint: callee.taint.union(argsTaint)}
	if method == "then" || method == "catch" || method == "finally" {
		param.ref = recv.ref
	}
	out := val{taint: param.taint}
	for _, a := range c.Args.List {
		if fn, params, body := funcLiteral(a.Value); fn != nil {
			out.taint = out.taint.union(b.callback(fn, params, body, []val{param, {taint: param.taint}}))
		}
	}
	if hasRecv && len(argsTaint) > 0 {
		b.mutate(dot.X, argsTaint) // acc.push(r), map.set(k, r)
	}
	return out
}

// evalArgs evaluates the arguments that are not function literals.
func (b *builder) evalArgs(args js.Args) symset {
	var t symset
	for _, a := range args.List {
		if fn, _, _ := funcLiteral(a.Value); fn != nil {
			continue
		}
		t = t.union(b.eval(a.Value).taint)
	}
	return t
}

// toolCall records one tool call site.
func (b *builder) toolCall(tool string, c *js.CallExpr) val {
	var deps symset
	for _, a := range c.Args.List {
		deps = deps.union(b.eval(a.Value).taint)
	}
	var args []byte
	if len(c.Args.List) > 0 && !c.Args.List[0].Rest {
		args = b.argsJSON(c.Args.List[0].Value)
	}
	v := b.newTask(tool, args, deps.union(b.ctrlTaint()))
	b.callTask[c] = len(b.tasks) - 1
	return v
}

// fork evaluates Promise.all and its siblings.
func (b *builder) fork(kind string, c *js.CallExpr) val {
	f := b.open(NodeFork, kind, nil, "")
	var arr val
	b.within(f, "", nil, func() {
		for i, a := range c.Args.List {
			v := b.eval(a.Value)
			if i == 0 {
				arr = v
			} else {
				arr.taint = arr.taint.union(v.taint)
			}
		}
	})
	switch kind {
	case "all":
		return val{taint: arr.taint, elems: arr.elems}
	case "allSettled": // elements are {status, value}: keep the data, not the paths
		out := val{taint: arr.taint}
		for _, e := range arr.elems {
			out.elems = append(out.elems, val{taint: e.taint})
		}
		return out
	}
	return val{taint: arr.taint}
}

// iterate evaluates items.map(fn) and the other iteration methods: a loop
// whose body is the callback.
func (b *builder) iterate(method string, recv val, recvExpr js.IExpr, c *js.CallExpr) val {
	b.escape(recv)
	other := b.evalArgs(c.Args)
	if recv.isArgsPath() {
		b.argNode(recv.path).hint("array")
	}
	l := b.open(NodeLoop, method, recv.taint, "", recvExpr)
	elem := val{taint: recv.taint.union(other)}
	if recv.ref != "" {
		elem.ref = recv.ref + "[]"
	}
	params := []val{elem, {taint: elem.taint}, {taint: elem.taint}}
	if method == "reduce" || method == "reduceRight" {
		params = []val{{taint: elem.taint}, elem, {taint: elem.taint}}
	}
	out := val{taint: elem.taint}
	b.within(l, "", recv.taint, func() {
		for _, a := range c.Args.List {
			if fn, fnParams, body := funcLiteral(a.Value); fn != nil {
				out.taint = out.taint.union(b.callback(fn, fnParams, body, params))
			}
		}
	})
	return out
}

// localCall records a call of a function the snippet defines.
func (b *builder) localCall(f *funcInfo, c *js.CallExpr) val {
	site := callSite{ctrl: b.ctrlTaint()}
	for _, a := range c.Args.List {
		v := b.eval(a.Value)
		if a.Rest {
			site.spread = site.spread.union(v.taint)
			continue
		}
		site.args = append(site.args, v.taint)
	}
	f.calls = append(f.calls, site)
	return val{taint: symset{f.ret}}
}

// funcLiteral returns the parts of a function literal, or nil.
func funcLiteral(e js.IExpr) (js.INode, js.Params, *js.BlockStmt) {
	switch f := unparen(e).(type) {
	case *js.ArrowFunc:
		return f, f.Params, &f.Body
	case *js.FuncDecl:
		return f, f.Params, &f.Body
	}
	return nil, js.Params{}, nil
}

func hasFuncArg(args js.Args) bool {
	for _, a := range args.List {
		if fn, _, _ := funcLiteral(a.Value); fn != nil {
			return true
		}
	}
	return false
}

func methodType(method string) string {
	switch {
	case stringMethods[method]:
		return "string"
	case arrayMethods[method]:
		return "array"
	case numberMethods[method]:
		return "number"
	}
	return ""
}

// isGlobal tells whether e is the undeclared global name.
func isGlobal(e js.IExpr, name string) bool {
	v, ok := unparen(e).(*js.Var)
	return ok && canon(v).Decl == js.NoDecl && string(v.Data) == name
}

func unparen(e js.IExpr) js.IExpr {
	for {
		g, ok := e.(*js.GroupExpr)
		if !ok {
			return e
		}
		e = g.X
	}
}
