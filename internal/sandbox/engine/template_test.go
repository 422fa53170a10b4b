package engine

import (
	"strconv"
	"testing"
)

// templateSetup leaves state a copy must carry over intact: objects of
// many kinds the built-ins make, a Map keyed by a string, an empty WeakMap,
// a host function, and a kept closure. Not an object as a key in a Map or a
// WeakMap: those hash objects by address (see Template).
const templateSetup = `
globalThis.state = { n: 1, list: [1, 2, 3], re: /a(b+)c/g, when: new Date(0), big: 10n ** 20n,
  set: new Set(['x']), sym: Symbol('s') };
globalThis.byName = new Map([['k', 'found']]);
globalThis.key = {};
globalThis.weak = new WeakMap();
(function counter(start) { let n = start; return () => ++n + host(1, 0, 0); })(100)
`

func newTemplate(t *testing.T) *Template {
	t.Helper()
	tpl, err := NewTemplate(64<<20, func(vm *VM) ([]Value, error) {
		if err := vm.InstallHost("host", func(op int, a, b Value) Value { return Int(0) }); err != nil {
			return nil, err
		}
		code, ok := vm.Compile(templateSetup, true)
		if !ok {
			t.Fatalf("compile: %s", vm.TakeException(1<<10).Message)
		}
		fn := vm.EvalBytecode(code)
		if fn.IsException() {
			t.Fatalf("setup: %s", vm.TakeException(1<<10).Message)
		}
		return []Value{fn}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tpl
}

// A copy of a template is a VM of its own: it carries the template's state
// (built-ins, objects, tables keyed by object, the kept closure), calls its
// own host function, runs new code, collects garbage, and shares nothing
// with another copy.
func TestTemplateClone(t *testing.T) {
	tpl := newTemplate(t)
	clone := func(hostAnswer int) (*VM, Value) {
		vm, kept, err := tpl.Clone(64<<20, func(op int, a, b Value) Value { return Int(hostAnswer) })
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(vm.Close)
		return vm, kept[0]
	}
	a, counterA := clone(1000)
	b, counterB := clone(2000)

	check := func(vm *VM, src, want string) {
		t.Helper()
		got, err := evalText(vm, src)
		if err != nil || got != want {
			t.Fatalf("%s: got %q, %v; want %q", src, got, err, want)
		}
	}
	for _, vm := range []*VM{a, b} {
		check(vm, `String([state.n, state.list.join('-'), 'xabbbc'.replace(state.re, '$1'), state.when.toISOString(),
			state.big, new Uint8Array([1, 2, 3])[2], state.set.has('x'), state.sym.toString()])`,
			"1,1-2-3,xbbb,1970-01-01T00:00:00.000Z,100000000000000000000,3,true,Symbol(s)")
		check(vm, `weak.set(key, 'weakly'); byName.get('k') + ' ' + weak.get(key) + ' ' + new Map([[key, 1]]).get(key)`, "found weakly 1")
		check(vm, `class P { constructor(x) { this.x = x } }; String(Array.from({length: 2000}, (_, i) => new P(i)).reduce((s, p) => s + p.x, 0))`, "1999000")
		check(vm, `JSON.stringify(Object.entries({a: 1, b: [2]}))`, `[["a",1],["b",[2]]]`)
	}
	// Each copy's own state and host function.
	check(a, `state.n = 7; state.list.push(4); String(state.list)`, "1,2,3,4")
	check(b, `String([state.n, state.list])`, "1,1,2,3")
	for vm, c := range map[*VM]struct {
		fn   Value
		want string
	}{a: {counterA, "1101"}, b: {counterB, "2101"}} {
		v := vm.Call(c.fn)
		if v.IsException() {
			t.Fatal(vm.TakeException(1 << 10).Message)
		}
		if got, _ := vm.GoString(v); got != c.want {
			t.Fatalf("the kept closure answered %s, want %s", got, c.want)
		}
		vm.Free(v)
	}
	// Math.random is seeded per copy.
	ra, _ := evalText(a, `String(Math.random())`)
	rb, _ := evalText(b, `String(Math.random())`)
	if ra == rb {
		t.Fatalf("two copies drew the same Math.random: %s", ra)
	}
}

// Many copies at once, each closed: copying is what a busy sandbox does.
func TestTemplateManyClones(t *testing.T) {
	tpl := newTemplate(t)
	vms := make([]*VM, 50)
	for i := range vms {
		vm, _, err := tpl.Clone(64<<20, nil)
		if err != nil {
			t.Fatal(err)
		}
		vms[i] = vm
		if got, err := evalText(vm, `state.n += `+strconv.Itoa(i)+`; String(state.n)`); err != nil || got != strconv.Itoa(1+i) {
			t.Fatalf("copy %d: %s %v", i, got, err)
		}
	}
	for _, vm := range vms {
		vm.Close()
	}
}

// A template whose two builds differ (setup keeps a value that depends on
// the build) is refused, and the caller builds VMs instead.
func TestTemplateRefusesDifferentBuilds(t *testing.T) {
	builds := 0
	_, err := NewTemplate(64<<20, func(vm *VM) ([]Value, error) {
		builds++
		if _, err := evalText(vm, `globalThis.junk = 'x'.repeat(`+strconv.Itoa(builds*1000)+`)`); err != nil {
			return nil, err
		}
		return nil, nil
	})
	if err == nil {
		t.Fatal("builds of different sizes made a template")
	}
}
