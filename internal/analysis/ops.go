package analysis

import (
	"github.com/tdewolff/parse/v2/js"
)

func (b *builder) binary(e *js.BinaryExpr) val {
	switch e.Op {
	case js.EqToken:
		v := b.evalExpr(e.Y)
		b.assign(e.X, v)
		return v
	case js.AndToken, js.OrToken, js.NullishToken:
		return b.logical(e)
	case js.AndEqToken, js.OrEqToken, js.NullishEqToken:
		x := b.evalCond(e.X)
		kind := "nullish"
		switch e.Op {
		case js.AndEqToken:
			kind = "and"
		case js.OrEqToken:
			kind = "or"
		}
		d := b.open(NodeDecision, kind, x.taint, "", e.X)
		var y val
		b.within(d, branchLabel(kind), x.taint, func() { y = b.eval(e.Y) })
		b.assign(e.X, val{taint: y.taint})
		return val{taint: x.taint.union(y.taint)}
	case js.EqEqToken, js.EqEqEqToken, js.NotEqToken, js.NotEqEqToken:
		x, y := b.evalExpr(e.X), b.evalExpr(e.Y)
		b.compare(x, e.Y)
		b.compare(y, e.X)
		b.escape(x)
		b.escape(y)
		return val{taint: x.taint.union(y.taint)}
	case js.InToken:
		x := b.eval(e.X)
		y := b.evalExpr(e.Y) // `"fs" in mcp` only probes
		if key, ok := stringKey(e.X); ok && y.args {
			if len(y.path) == 0 {
				b.argsReads++ // "key" in args: a read by name
			}
			b.argNode(append(y.path[:len(y.path):len(y.path)], key)).optional = true
		} else if y.args {
			b.argNode(y.path) // used beyond what we can list: the schema stays open
		}
		return val{taint: x.taint.union(y.taint)}
	case js.SubToken, js.MulToken, js.DivToken, js.ModToken, js.ExpToken,
		js.LtToken, js.GtToken, js.LtEqToken, js.GtEqToken:
		x, y := b.eval(e.X), b.eval(e.Y)
		arithmetic := e.Op == js.SubToken || e.Op == js.MulToken || e.Op == js.DivToken ||
			e.Op == js.ModToken || e.Op == js.ExpToken
		for _, side := range [2]struct {
			v     val
			other js.IExpr
		}{{x, e.Y}, {y, e.X}} {
			if side.v.isArgsPath() && (arithmetic || isNumberLiteral(side.other)) {
				b.argNode(side.v.path).hint("number")
			}
		}
		return val{taint: x.taint.union(y.taint)}
	}
	if isAssignOp(e.Op) { // +=, -=, ...: the target keeps what it had and gains the rest
		y := b.eval(e.Y)
		x := b.eval(e.X)
		b.assign(e.X, val{taint: y.taint})
		return val{taint: x.taint.union(y.taint)}
	}
	x, y := b.eval(e.X), b.eval(e.Y)
	return val{taint: x.taint.union(y.taint)}
}

// logical evaluates a && b, a || b and a ?? b: the right side is a branch
// that runs depending on the left.
func (b *builder) logical(e *js.BinaryExpr) val {
	var x val
	kind := "nullish"
	switch e.Op {
	case js.AndToken:
		kind = "and"
		x = b.evalCond(e.X)
	case js.OrToken:
		kind = "or"
		x = b.evalExpr(e.X)
	default:
		x = b.evalExpr(e.X)
	}
	if e.Op != js.AndToken && x.isArgsPath() {
		// args.x ?? d, args.x || d: x is optional, d its default.
		n := b.argNode(x.path)
		n.optional = true
		if lit, ok := literalValue(e.Y); ok {
			n.setDefault(lit)
		}
	}
	b.escape(x)
	d := b.open(NodeDecision, kind, x.taint, "", e.X)
	var y val
	b.within(d, branchLabel(kind), x.taint, func() { y = b.evalExpr(e.Y) })
	b.escape(y)
	out := val{taint: x.taint.union(y.taint)}
	if e.Op != js.AndToken && x.args {
		out.args, out.path = true, x.path // `const o = args.opts ?? {}` still reads args.opts
	}
	return out
}

// branchLabel is the label of the branch that runs the right side.
func branchLabel(kind string) string {
	switch kind {
	case "and":
		return "true"
	case "or":
		return "false"
	}
	return "nullish"
}

// compare records what `v == other` says about an args property.
func (b *builder) compare(v val, other js.IExpr) {
	if v.typeofArgs {
		if s, ok := stringKey(other); ok {
			n := b.argNode(v.path)
			if s == "undefined" {
				n.optional = true
			} else if jsonType(s) != "" {
				n.hint(jsonType(s))
			}
		}
		return
	}
	if !v.isArgsPath() {
		return
	}
	n := b.argNode(v.path)
	if isUndefined(other) {
		n.optional = true
		return
	}
	if lit, ok := literalValue(other); ok {
		if lit == nil {
			n.optional = true
		} else if t := valueType(lit); t != "" {
			n.hint(t)
		}
	}
}

// jsonType maps a typeof result to a JSON Schema type.
func jsonType(typeofResult string) string {
	switch typeofResult {
	case "string", "number", "boolean", "object":
		return typeofResult
	case "bigint":
		return "integer"
	}
	return ""
}

// isUndefined matches undefined and void 0 (how esbuild prints undefined).
func isUndefined(e js.IExpr) bool {
	switch e := unparen(e).(type) {
	case *js.Var:
		return canon(e).Decl == js.NoDecl && string(e.Data) == "undefined"
	case *js.UnaryExpr:
		return e.Op == js.VoidToken
	}
	return false
}

func isNumberLiteral(e js.IExpr) bool {
	if u, ok := e.(*js.UnaryExpr); ok && (u.Op == js.NegToken || u.Op == js.PosToken) {
		e = u.X
	}
	l, ok := e.(*js.LiteralExpr)
	return ok && js.IsNumeric(l.TokenType)
}

func isAssignOp(op js.TokenType) bool {
	switch op {
	case js.AddEqToken, js.SubEqToken, js.MulEqToken, js.DivEqToken, js.ModEqToken, js.ExpEqToken,
		js.LtLtEqToken, js.GtGtEqToken, js.GtGtGtEqToken, js.BitAndEqToken, js.BitOrEqToken, js.BitXorEqToken:
		return true
	}
	return false
}
