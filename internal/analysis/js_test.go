package analysis

import (
	"regexp"
	"strconv"
	"testing"

	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/sandbox/engine"
)

// runJS evaluates a.JS in the sandbox's engine the way a sandbox does:
// evaluate the expression, call it with args, await it. mcp is a stub whose
// tools echo. It returns the result as JSON, or the error stack.
func runJS(t *testing.T, a *Analysis, args string) (result string, stack string) {
	t.Helper()
	vm, err := engine.New(64 << 20)
	if err != nil {
		t.Fatal(err)
	}
	defer vm.Close()
	eval := func(src string) string {
		t.Helper()
		code, ok := vm.Compile(src, false)
		if !ok {
			t.Fatalf("compile: %s\n%s", vm.TakeException(4<<10).Message, a.JS)
		}
		v := vm.EvalBytecode(code)
		if v.IsException() {
			t.Fatalf("eval: %s\n%s", vm.TakeException(4<<10).Message, a.JS)
		}
		defer vm.Free(v)
		s, _ := vm.GoString(v)
		return s
	}
	eval(`globalThis.mcp = new Proxy({}, { get: (_, ns) => new Proxy({}, {
		get: (_, action) => async (a) => ({ tool: ns + ":" + action, args: a }) }) });`)
	// The function expression goes on a line of its own so JS line numbers
	// are the Analysis's.
	eval("globalThis.__f =\n" + a.JS + ";\n__f(" + args + ").then(v => { globalThis.__r = JSON.stringify(v) }, " +
		"e => { globalThis.__e = String(e && e.stack) })")
	for vm.RunJob() > 0 {
	}
	return eval("globalThis.__r ?? ''"), eval("globalThis.__e ?? ''")
}

func TestJSRunsInSandboxEngine(t *testing.T) {
	tests := []struct{ name, code, args, want string }{
		{"top-level await and return", "const r = await mcp.math.add({ a: args.n as number });\nreturn r.args.a + 1;", "{n: 41}", "42"},
		{"no return", "const x: number = 1;", "{}", ""},
		{"enum", "enum E { A = 2 }\nreturn E.A * args.k", "{k: 21}", "42"},
		{"runtime helpers (decorators)", "function logged(v: any, _c: any) { return v }\n" +
			"class C { @logged m() { return mcp.a.b({ x: 1 }) } }\nreturn (await new C().m()).tool", "{}", `"a:b"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := Analyze(tt.code)
			if err != nil {
				t.Fatal(err)
			}
			got, stack := runJS(t, a, tt.args)
			if stack != "" || got != tt.want {
				t.Fatalf("result %q, error %q; want %q\nJS:\n%s", got, stack, tt.want, a.JS)
			}
		})
	}
}

var stackPosition = regexp.MustCompile(`<eval>:(\d+):(\d+)`)

// An error thrown at run time maps back to the user's TypeScript line.
func TestOriginalPositionFromEngineStack(t *testing.T) {
	tests := []struct {
		name     string
		code     string
		wantLine int
		wantCol  int // 0: not checked
	}{
		{"after types", "interface A { x: number }\nconst a: A = { x: 1 };\n\n   throw new Error('boom ' + a.x)", 4, 14},
		{"line 1", "throw new Error('first line')", 1, 11},
		{"after an enum", "enum E { A, B }\nconst e: E = E.B;\nif (e === E.B) {\n  null!.crash();\n}", 4, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := Analyze(tt.code)
			if err != nil {
				t.Fatal(err)
			}
			_, stack := runJS(t, a, "{}")
			m := stackPosition.FindStringSubmatch(stack)
			if m == nil {
				t.Fatalf("no position in stack %q", stack)
			}
			line, _ := strconv.Atoi(m[1])
			col, _ := strconv.Atoi(m[2])
			line-- // the "globalThis.__f =" line runJS adds
			gotLine, gotCol := a.OriginalPosition(line, col)
			if gotLine != tt.wantLine || (tt.wantCol != 0 && gotCol != tt.wantCol) {
				t.Errorf("JS %d:%d maps to %d:%d; want %d:%d\nJS:\n%s", line, col, gotLine, gotCol, tt.wantLine, tt.wantCol, a.JS)
			}
		})
	}
}

func TestOriginalPositionClamps(t *testing.T) {
	a, err := Analyze("const a: number = 1;\nreturn a")
	if err != nil {
		t.Fatal(err)
	}
	for _, pos := range [][2]int{{0, 0}, {1, 1}, {1, 5}, {100, 1}, {-3, 7}} {
		line, col := a.OriginalPosition(pos[0], pos[1])
		if line < 1 || line > 2 || col < 1 {
			t.Errorf("OriginalPosition(%d, %d) = %d:%d; want a position inside the 2-line code", pos[0], pos[1], line, col)
		}
	}
	// The wrapper line maps to the start of the user's code.
	if line, col := a.OriginalPosition(1, 1); line != 1 || col != 1 {
		t.Errorf("wrapper line maps to %d:%d; want 1:1", line, col)
	}
}

func TestMapError(t *testing.T) {
	a, err := Analyze("const a: number = 1;\n\nthrow new Error('x' + a)")
	if err != nil {
		t.Fatal(err)
	}
	_, stack := runJS(t, a, "{}")
	m := stackPosition.FindStringSubmatch(stack)
	if m == nil {
		t.Fatalf("no position in stack %q", stack)
	}
	line, _ := strconv.Atoi(m[1])
	col, _ := strconv.Atoi(m[2])
	codeErr := pmlerr.New(pmlerr.CodeError, "Error: x1").With("line", line-1).With("column", col)
	if got := a.MapError(codeErr); got != codeErr || codeErr.Details["line"] != 3 {
		t.Errorf("mapped details %v; want line 3", codeErr.Details)
	}
	plain := pmlerr.New(pmlerr.ToolError, "boom")
	if a.MapError(plain) != plain || plain.Details != nil {
		t.Error("an error without a position changed")
	}
}
