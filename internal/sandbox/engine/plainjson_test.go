package engine

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"

	"modernc.org/libc"
	lib "modernc.org/libquickjs"
)

// TestPlainJSON checks the arguments JSON written in Go against
// JSON.stringify, and that everything else is left to the bridge.
func TestPlainJSON(t *testing.T) {
	vm := newVM(t)
	inGo := []string{
		`({})`, `({a: 1, b: 2})`, `({a: [1, "two", true, false, null, {}], b: {c: {d: []}}})`,
		`({s: "quote \" backslash \\ newline \n tab \t nul \0 bell \x07 del \x7f é 😀 \u2028"})`,
		`({n: [1.5, -0, 0, 1e21, 1e-7, -1e-7, 1e-6, 123456789012, 0.1 + 0.2, NaN, Infinity, -Infinity, 5e-324, 1.7976931348623157e308, 2 ** 31, -(2 ** 31), 2 ** 53 + 2, 1e20, 123e-20]})`,
		`({b: 1, a: 2, 1: 3, 0: 4, "x y": 5, "é": 6})`,
		`({u: undefined, a: [undefined, 1], v: 2})`,
		`Object.assign(Object.create(null), {p: 1})`,
		`(() => { const a = [1, 2]; a.extra = 3; return {a} })()`,
		`(() => { const o = {a: 1, b: 2, c: 3}; delete o.b; return o })()`,
		`(() => { const shared = {x: 1}; return {p: shared, q: shared} })()`,
		`({nested: ` + strings.Repeat("[", 60) + strings.Repeat("]", 60) + `})`,
		`({rope: "x".repeat(3000) + "é".repeat(3000) + "\n"})`, // concatenated long strings are ropes
	}
	toJS := []string{
		`({get g() { return 1 }})`, `({toJSON() { return {} }})`, `({d: new Date(0)})`, `({m: new Map()})`,
		`({c: new (class C {})()})`, `({f() {}})`, `({s: Symbol("s")})`, `({b: 1n})`, `({h: [1, , 2]})`,
		`({s: "\ud800"})`, `({p: new Proxy({}, {})})`, `(() => { const o = {}; o.o = o; return o })()`,
		`({n: new Number(1)})`, `({deep: ` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `})`,
		`(() => { const a = [1]; Object.defineProperty(a, 0, {get() { return 2 }}); return {a} })()`,
		`(() => { const o = {}; Object.defineProperty(o, "toJSON", {value: () => 1}); return o })()`,
	}
	e := vm
	check := func(expr string, wantGo bool) {
		t.Helper()
		if _, err := evalText(vm, "void (globalThis.__v = "+expr+")"); err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		name, _ := libc.CString("__v")
		defer libc.Xfree(e.tls, name)
		v := lib.XJS_GetPropertyStr(e.tls, e.ctx, (*lib.TJSContext)(cPointer(e.ctx)).Fglobal_obj, name)
		defer e.free(v)
		got, ok := e.plainJSON(v, 1<<20)
		if ok != wantGo {
			t.Errorf("%s: written in Go %v, want %v", expr, ok, wantGo)
			return
		}
		if !ok {
			return
		}
		want, err := evalText(vm, "JSON.stringify(__v)")
		if err != nil {
			t.Fatalf("%s: written in Go as %s, but JSON.stringify fails: %v", expr, got, err)
		}
		if string(got) != want {
			t.Errorf("%s:\ngot  %s\nwant %s", expr, got, want)
		}
	}
	for _, expr := range inGo {
		check(expr, true)
	}
	for _, expr := range toJS {
		check(expr, false)
	}
	// A toJSON on a shared prototype sends every object to the bridge.
	for _, proto := range []string{"Object", "Array"} {
		if _, err := evalText(vm, "void ("+proto+".prototype.toJSON = () => 1)"); err != nil {
			t.Fatal(err)
		}
		check(`({a: 1})`, false)
		if _, err := evalText(vm, "delete "+proto+".prototype.toJSON"); err != nil {
			t.Fatal(err)
		}
		check(`({a: 1})`, true)
	}
	// The size bound.
	if _, ok := e.plainJSON(mustGlobal(t, vm, `({s: "x".repeat(100)})`), 50); ok {
		t.Error("arguments over the bound were written in Go")
	}
}

func mustGlobal(t testing.TB, vm *VM, expr string) lib.TJSValue {
	t.Helper()
	if _, err := evalText(vm, "void (globalThis.__w = "+expr+")"); err != nil {
		t.Fatal(err)
	}
	e := vm
	name, _ := libc.CString("__w")
	defer libc.Xfree(e.tls, name)
	v := lib.XJS_GetPropertyStr(e.tls, e.ctx, (*lib.TJSContext)(cPointer(e.ctx)).Fglobal_obj, name)
	e.free(v) // the global still holds it
	return v
}

func TestAppendJSNumber(t *testing.T) {
	for f, want := range map[float64]string{
		1: "1", -2.5: "-2.5", 1e21: "1e+21", 1.5e-7: "1.5e-7", 1e-6: "0.000001", 123e300: "1.23e+302",
		math.Copysign(0, -1): "0", math.NaN(): "null", math.Inf(-1): "null", 1e20: "100000000000000000000",
	} {
		if got := string(appendJSNumber(nil, f)); got != want {
			t.Errorf("%v: got %s, want %s", f, got, want)
		}
	}
}

// FuzzPlainJSON compares the JSON written in Go with JSON.stringify for
// strings and numbers, where the two could drift apart.
func FuzzPlainJSON(f *testing.F) {
	for _, s := range []string{"", "plain", "quote \" backslash \\", "\x00\x1f\x7f", "é😀\u2028", "\xff"} {
		f.Add(s, 1.5)
	}
	for _, n := range []float64{0, -1, 1e21, 1e-7, 123456.789, 5e-324, math.MaxFloat64, 1 << 53} {
		f.Add("n", n)
	}
	vm := newVM(f)
	f.Fuzz(func(t *testing.T, s string, n float64) {
		str, _ := json.Marshal(s) // a JS string literal too
		num := strconv.FormatFloat(n, 'g', -1, 64)
		switch {
		case math.IsNaN(n):
			num = "NaN"
		case math.IsInf(n, 1):
			num = "Infinity"
		case math.IsInf(n, -1):
			num = "-Infinity"
		}
		v := mustGlobal(t, vm, "({s: "+string(str)+", n: "+num+", a: ["+num+", "+string(str)+"]})")
		got, ok := vm.plainJSON(v, 1<<20)
		if !ok {
			t.Fatalf("%s, %s: not written in Go", str, num)
		}
		want, err := evalText(vm, "JSON.stringify(__w)")
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Fatalf("got  %s\nwant %s", got, want)
		}
	})
}
