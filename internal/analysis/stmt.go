package analysis

import (
	"github.com/tdewolff/parse/v2/js"
)

// stmts walks a statement list. Function declarations are hoisted first, so
// a call before the declaration still reaches the function.
func (b *builder) stmts(list []js.IStmt) {
	for _, s := range list {
		if fd, ok := s.(*js.FuncDecl); ok && fd.Name != nil {
			b.vars[canon(fd.Name)] = val{fn: b.funcFor(fd, fd.Params)}
		}
	}
	for _, s := range list {
		b.stmt(s)
	}
}

func (b *builder) stmt(s js.IStmt) {
	switch s := s.(type) {
	case *js.ExprStmt:
		b.eval(s.Value)
	case *js.VarDecl:
		b.varDecl(s)
	case *js.BlockStmt:
		b.stmts(s.List)
	case *js.IfStmt:
		b.ifStmt(s)
	case *js.SwitchStmt:
		b.switchStmt(s)
	case *js.ForStmt:
		b.forStmt(s)
	case *js.ForInStmt:
		b.forInOf("for_in", s.Init, s.Value, s.Body, false)
	case *js.ForOfStmt:
		b.forInOf("for_of", s.Init, s.Value, s.Body, true)
	case *js.WhileStmt:
		l := b.open(NodeLoop, "while", nil, "", s.Cond)
		b.within(l, "", nil, func() {
			c := b.evalCond(s.Cond)
			b.within(l, "", c.taint, func() { b.stmt(s.Body) })
			l.deps = c.taint
		})
	case *js.DoWhileStmt:
		l := b.open(NodeLoop, "do_while", nil, "", s.Cond)
		b.within(l, "", nil, func() {
			b.stmt(s.Body)
			l.deps = b.evalCond(s.Cond).taint
		})
	case *js.ReturnStmt:
		v := b.eval(s.Value)
		if b.fn != nil {
			b.fn.returns = b.fn.returns.union(v.taint)
		}
	case *js.ThrowStmt:
		b.eval(s.Value)
	case *js.TryStmt:
		b.tryStmt(s)
	case *js.LabelledStmt:
		b.stmt(s.Value)
	case *js.WithStmt:
		b.eval(s.Cond)
		b.stmt(s.Body)
	case *js.FuncDecl:
		b.declaredFunc(s, s.Params, &s.Body)
	case *js.ClassDecl:
		b.class(s)
	}
}

func (b *builder) varDecl(d *js.VarDecl) {
	for _, el := range d.List {
		var v val
		if el.Default != nil {
			v = b.evalExpr(el.Default)
		}
		b.bind(el.Binding, v)
	}
}

func (b *builder) ifStmt(s *js.IfStmt) {
	c := b.evalCond(s.Cond)
	d := b.open(NodeDecision, "if", c.taint, "", s.Cond)
	b.within(d, "true", c.taint, func() { b.stmt(s.Body) })
	if s.Else != nil {
		b.within(d, "false", c.taint, func() { b.stmt(s.Else) })
	}
}

func (b *builder) switchStmt(s *js.SwitchStmt) {
	disc := b.eval(s.Init)
	d := b.open(NodeDecision, "switch", disc.taint, "", s.Init)
	for _, clause := range s.List {
		label := "default"
		ctrl := disc.taint
		if clause.Cond != nil {
			label = exprText(clause.Cond)
			ctrl = ctrl.union(b.eval(clause.Cond).taint)
		}
		b.within(d, label, ctrl, func() { b.stmts(clause.List) })
	}
}

func (b *builder) forStmt(s *js.ForStmt) {
	switch init := s.Init.(type) {
	case nil:
	case *js.VarDecl:
		b.varDecl(init)
	default:
		b.eval(init)
	}
	l := b.open(NodeLoop, "for", nil, "; ", s.Init, s.Cond, s.Post)
	b.within(l, "", nil, func() {
		var c val
		if s.Cond != nil {
			c = b.evalCond(s.Cond)
		}
		l.deps = c.taint
		b.within(l, "", c.taint, func() {
			if s.Body != nil {
				b.stmts(s.Body.List)
			}
			b.eval(s.Post)
		})
	})
}

// forInOf walks for-in and for-of: the loop variable derives from the
// iterated value, and the body runs under it.
func (b *builder) forInOf(kind string, init, value js.IExpr, body *js.BlockStmt, of bool) {
	it := b.eval(value)
	word := " in "
	if of {
		word = " of "
	}
	l := b.open(NodeLoop, kind, it.taint, word, init, value)
	elem := val{taint: it.taint}
	if of {
		if it.ref != "" {
			elem.ref = it.ref + "[]"
		}
		if it.isArgsPath() {
			b.argNode(it.path).hint("array")
		}
	}
	b.within(l, "", it.taint, func() {
		switch init := init.(type) {
		case *js.VarDecl:
			for _, el := range init.List {
				b.bind(el.Binding, elem)
			}
		default:
			b.assign(init, elem)
		}
		if body != nil {
			b.stmts(body.List)
		}
	})
}

func (b *builder) tryStmt(s *js.TryStmt) {
	first := len(b.tasks)
	b.stmts(s.Body.List)
	if s.Catch != nil {
		// The caught error may come from any call of the try block.
		var thrown symset
		for _, t := range b.tasks[first:] {
			thrown = thrown.union(symset{t.sym})
		}
		if s.Binding != nil {
			b.bind(s.Binding, val{taint: thrown})
		}
		b.stmts(s.Catch.List)
	}
	if s.Finally != nil {
		b.stmts(s.Finally.List)
	}
}

// declaredFunc walks a function that runs when called: its parameters and
// calling context are placeholders filled by its call sites.
func (b *builder) declaredFunc(n js.INode, params js.Params, body *js.BlockStmt) *funcInfo {
	f := b.funcFor(n, params)
	if f.walked {
		return f
	}
	f.walked = true
	prevFn, prevCtrl := b.fn, b.ctrl
	b.fn, b.ctrl = f, []symset{{f.ctrl}}
	b.enterRegion()
	for i, p := range params.List {
		v := val{taint: symset{f.params[i]}}
		if p.Default != nil {
			v.taint = v.taint.union(b.eval(p.Default).taint)
		}
		b.bind(p.Binding, v)
	}
	if params.Rest != nil {
		b.bind(params.Rest, val{taint: symset{f.params[len(f.params)-1]}})
	}
	b.stmts(body.List)
	b.exitRegion()
	b.fn, b.ctrl = prevFn, prevCtrl
	return f
}

// callback walks a function passed to a call: it runs in the caller's
// context with parameters derived from the call (the array being mapped, the
// promise being awaited). It returns what the callback returns.
func (b *builder) callback(n js.INode, params js.Params, body *js.BlockStmt, paramVals []val) symset {
	f := b.funcFor(n, params)
	f.walked = true
	prevFn := b.fn
	b.fn = f
	b.enterRegion()
	for i, p := range params.List {
		var v val
		if i < len(paramVals) {
			v = paramVals[i]
		}
		if p.Default != nil {
			v.taint = v.taint.union(b.eval(p.Default).taint)
		}
		b.bind(p.Binding, v)
	}
	if params.Rest != nil {
		var rest val
		for _, v := range paramVals[min(len(params.List), len(paramVals)):] {
			rest.taint = rest.taint.union(v.taint)
		}
		b.bind(params.Rest, rest)
	}
	b.stmts(body.List)
	b.exitRegion()
	b.fn = prevFn
	return f.returns
}

// class walks a class: methods are functions nobody is known to call, field
// initializers and static blocks run where the class is defined.
func (b *builder) class(c *js.ClassDecl) {
	b.eval(c.Extends)
	for _, el := range c.List {
		switch {
		case el.StaticBlock != nil:
			b.stmts(el.StaticBlock.List)
		case el.Method != nil:
			if el.Method.Name.Computed != nil {
				b.eval(el.Method.Name.Computed)
			}
			b.declaredFunc(el.Method, el.Method.Params, &el.Method.Body)
		default:
			if el.Name.Computed != nil {
				b.eval(el.Name.Computed)
			}
			b.eval(el.Init)
		}
	}
}
