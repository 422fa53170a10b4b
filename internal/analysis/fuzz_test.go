package analysis

import (
	"slices"
	"strings"
	"testing"

	"github.com/pml-go/pml/internal/pmlerr"
)

func FuzzAnalyze(f *testing.F) {
	for _, seed := range []string{
		"", "// c", "return 1", benchSnippet,
		"await mcp.a.b({ x: await mcp.c.d() })",
		"const [a, b] = await Promise.all([mcp.p.a(), mcp.p.b()]); if (a.ok) await mcp.q.r({ b })",
		"for (const x of args.xs) { await mcp.fs.read({ path: x }) }",
		"const m = mcp; await m[args.k].go()",
		"async function f(x) { return f(await mcp.a.b({ x })) }",
		"}); x(); (function() {",
		"import('x')", "`${", "/re/g.test(mcp)", "enum E { A }", "class C { @d m() {} }",
		"const s = \"\\u{1F600}\"; return s", "a ?? b ?? await mcp.x.y()", "label: { break label }",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, code string) {
		a, err := Analyze(code)
		if err != nil {
			pe, ok := pmlerr.As(err)
			if !ok {
				t.Fatalf("error without a code: %v", err)
			}
			switch pe.Code {
			case pmlerr.EmptyCode, pmlerr.CodeTooLarge:
			case pmlerr.SyntaxError:
				line, _ := pe.Details["line"].(int)
				col, _ := pe.Details["column"].(int)
				if line < 1 || col < 1 {
					t.Fatalf("syntax error position %d:%d", line, col)
				}
			default:
				t.Fatalf("unexpected code %s: %v", pe.Code, err)
			}
			return
		}
		if !strings.HasPrefix(a.JS, "(") || !strings.HasSuffix(a.JS, ")") {
			t.Fatalf("JS is not parenthesized: %q", a.JS)
		}
		checkDAG(t, a.DAG)
		for _, task := range a.DAG.Tasks {
			if !slices.Contains(a.Tools, task.Tool) {
				t.Fatalf("task tool %s not in tools %v", task.Tool, a.Tools)
			}
		}
		line, col := a.OriginalPosition(2, 3)
		if line < 1 || col < 1 {
			t.Fatalf("OriginalPosition gave %d:%d", line, col)
		}
	})
}
