package analysis

import (
	"strings"
	"testing"

	"github.com/pml-go/pml/internal/pmlerr"
)

func TestAnalyzeRejects(t *testing.T) {
	tests := []struct {
		name       string
		code       string
		want       pmlerr.Code
		line, col  int    // for SYNTAX_ERROR
		msgContain string // optional
	}{
		{name: "empty", code: "", want: pmlerr.EmptyCode},
		{name: "blanks", code: " \n\t\r\n ", want: pmlerr.EmptyCode},
		{name: "line comment", code: "// mcp.fs.read({})", want: pmlerr.EmptyCode},
		{name: "comments", code: "/* a */\n// b\n  /** c */", want: pmlerr.EmptyCode},
		{name: "too large", code: "//" + strings.Repeat("x", MaxCodeBytes-1), want: pmlerr.CodeTooLarge},
		{
			name: "error after type annotations",
			code: "const a: number = 1;\nconst b: Array<string> = [];\nif (} ",
			want: pmlerr.SyntaxError, line: 3, col: 5,
		},
		{name: "line 1", code: "const x = 1 +;", want: pmlerr.SyntaxError, line: 1, col: 14},
		{name: "CRLF", code: "const a: number = 1;\r\nconst b = ;", want: pmlerr.SyntaxError, line: 2, col: 11},
		{name: "UTF-16 columns", code: `const x = "😀" +;`, want: pmlerr.SyntaxError, line: 1, col: 17},
		{
			name: "unclosed block", code: "const r = 1;\nif (r) {\n  r + 1;",
			want: pmlerr.SyntaxError, line: 3, col: 9, msgContain: "not closed",
		},
		{name: "args is the parameter", code: "const args = 1", want: pmlerr.SyntaxError, line: 1, col: 7},
		{
			name: "static import", code: "import fs from \"fs\";\nreturn fs",
			want: pmlerr.SyntaxError, line: 1, msgContain: "cannot import",
		},
		{
			name: "type-only import", code: "import type { X } from \"./x\";\nreturn 1",
			want: pmlerr.SyntaxError, line: 1, msgContain: "cannot import",
		},
		{name: "export", code: "export const x = 1", want: pmlerr.SyntaxError, line: 1, msgContain: "export"},
		{
			name: "dynamic import", code: "const n: number = 1;\nconst m = await import(\"fs\");",
			want: pmlerr.SyntaxError, line: 2, col: 17, msgContain: "cannot import",
		},
		{
			name: "import.meta", code: "// where am I\nreturn import.meta.url",
			want: pmlerr.SyntaxError, line: 2, col: 8, msgContain: "cannot import",
		},
		{
			name: "closing the code body", code: "const x: number = 1;\n}); globalThis.leak = 1; (async function () {",
			want: pmlerr.SyntaxError, line: 2, col: 1, msgContain: "closes the code body",
		},
		{
			name: "closing the code body in an expression", code: "return 1\n}), (async function () {",
			want: pmlerr.SyntaxError, line: 2, col: 1, msgContain: "closes the code body",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := Analyze(tt.code)
			if err == nil {
				t.Fatalf("Analyze succeeded (JS %q); want %s", a.JS, tt.want)
			}
			pe, ok := pmlerr.As(err)
			if !ok || pe.Code != tt.want {
				t.Fatalf("error %v; want code %s", err, tt.want)
			}
			if tt.msgContain != "" && !strings.Contains(pe.Message, tt.msgContain) {
				t.Errorf("message %q does not contain %q", pe.Message, tt.msgContain)
			}
			if tt.want != pmlerr.SyntaxError {
				return
			}
			line, lok := pe.Details["line"].(int)
			col, cok := pe.Details["column"].(int)
			if !lok || !cok {
				t.Fatalf("details %v: want int line and column", pe.Details)
			}
			if line != tt.line || (tt.col != 0 && col != tt.col) {
				t.Errorf("position %d:%d (%s); want %d:%d", line, col, pe.Message, tt.line, tt.col)
			}
		})
	}
}

func TestAnalyzeSizeLimit(t *testing.T) {
	code := "return 1;" + strings.Repeat(" ", MaxCodeBytes-len("return 1;"))
	if _, err := Analyze(code); err != nil {
		t.Fatalf("code of exactly MaxCodeBytes: %v", err)
	}
	_, err := Analyze(code + " ")
	if pmlerr.CodeOf(err, "") != pmlerr.CodeTooLarge {
		t.Fatalf("code of MaxCodeBytes+1: %v; want CODE_TOO_LARGE", err)
	}
}

// TypeScript-only syntax is stripped, not rejected.
func TestAnalyzeStripsTypeScript(t *testing.T) {
	code := `interface Item { id: string; size?: number }
type Pair<T> = [T, T];
declare const helper: (x: number) => number;
enum Color { Red, Green = "green" }
abstract class Base<T> { abstract get(): T; protected constructor(public readonly id: string) {} }
function first<T extends Item>(xs: readonly T[]): T | undefined { return xs[0]; }
const items = (await mcp.store.list({ limit: 10 as number })) as Item[];
const one = first<Item>(items)!;
const pair: Pair<number> = [1, 2] satisfies number[];
return { id: one.id, color: Color.Green, pair } as const;`
	a, err := Analyze(code)
	if err != nil {
		t.Fatal(err)
	}
	for _, ts := range []string{"interface", "satisfies", "readonly", "Pair<", "abstract", " as "} {
		if strings.Contains(a.JS, ts) {
			t.Errorf("JS still contains %q:\n%s", ts, a.JS)
		}
	}
	if !strings.HasPrefix(a.JS, "(async function(args) {") || !strings.HasSuffix(a.JS, "})") {
		t.Errorf("JS is not a parenthesized async function:\n%s", a.JS)
	}
	if len(a.Tools) != 1 || a.Tools[0] != "store:list" {
		t.Errorf("tools %v; want [store:list]", a.Tools)
	}
}
