package analysis

import (
	"github.com/tdewolff/parse/v2/js"
)

// bind declares the variables of a binding pattern with the value v.
func (b *builder) bind(binding js.IBinding, v val) {
	switch p := binding.(type) {
	case *js.Var:
		b.setVar(canon(p), v, false)
	case *js.BindingObject:
		for _, item := range p.List {
			b.bindProperty(item, v)
		}
		if p.Rest != nil {
			if v.mcp != mcpNone || v.global {
				b.dynamic = true
			}
			if v.args {
				b.argNode(v.path) // used beyond what we can list: the schema stays open
			}
			b.setVar(canon(p.Rest), val{taint: v.taint}, false)
		}
	case *js.BindingArray:
		if v.isArgsPath() {
			b.argNode(v.path).hint("array")
		}
		for i, el := range p.List {
			if el.Binding == nil {
				continue
			}
			sub := b.element(v, i)
			if el.Default != nil {
				sub.taint = sub.taint.union(b.eval(el.Default).taint)
			}
			b.bind(el.Binding, sub)
		}
		if p.Rest != nil {
			b.bind(p.Rest, val{taint: v.taint})
		}
	}
}

// bindProperty binds one `key: pattern = default` of an object pattern.
func (b *builder) bindProperty(item js.BindingObjectItem, v val) {
	var name string
	ok := false
	switch {
	case item.Key != nil:
		name, ok = propertyName(*item.Key)
		if !ok {
			b.eval(item.Key.Computed)
		}
	default:
		if id, isVar := item.Value.Binding.(*js.Var); isVar {
			name, ok = string(id.Data), true
		}
	}
	sub := val{taint: v.taint}
	if ok {
		sub = b.member(v, name, false)
	} else if v.mcp != mcpNone || v.global {
		b.dynamic = true // const {[k]: f} = mcp
	}
	if item.Value.Default != nil {
		d := b.eval(item.Value.Default)
		if sub.isArgsPath() {
			n := b.argNode(sub.path)
			n.optional = true
			if lit, isLit := literalValue(item.Value.Default); isLit {
				n.setDefault(lit)
			}
		}
		sub.taint = sub.taint.union(d.taint)
	}
	b.bind(item.Value.Binding, sub)
}
