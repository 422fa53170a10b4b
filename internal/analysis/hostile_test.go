package analysis

import (
	"strconv"
	"strings"
	"testing"

	"github.com/pml-go/pml/internal/pmlerr"
)

// Code built to be expensive is refused early or stays linear.
func TestDeepNestingIsRefused(t *testing.T) {
	for name, code := range map[string]string{
		"arrows":    "const f = " + strings.Repeat("() => ", 5000) + "1;",
		"brackets":  "const a = " + strings.Repeat("[", 5000),
		"blocks":    "const x: number = 1;\n" + strings.Repeat("if (x) {", 300),
		"templates": "const s = `" + strings.Repeat("${`", 1000),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Analyze(code)
			pe, ok := pmlerr.As(err)
			if !ok || pe.Code != pmlerr.SyntaxError || !strings.Contains(pe.Message, "nested too deeply") {
				t.Fatalf("error %v; want SYNTAX_ERROR nested too deeply", err)
			}
		})
	}
	// Ordinary arrows, however many, are not nesting.
	code := strings.Repeat("{ const f = (x: number) => x + 1, g = async () => 2;\n[1].map(y => y).filter(z => !!z) }\n", 400)
	if _, err := Analyze(code); err != nil {
		t.Fatalf("sequential arrows: %v", err)
	}
}

func TestDependenciesStayBounded(t *testing.T) {
	// Every call reads everything before it: a quadratic DAG unless implied
	// dependencies are left out.
	code := "const acc: any[] = [];\n" + strings.Repeat("acc.push(await mcp.a.b({ acc }));\n", 1500)
	a, err := Analyze(code)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, task := range a.DAG.Tasks {
		total += len(task.DependsOn)
	}
	if total > 2*len(a.DAG.Tasks) {
		t.Errorf("%d dependencies for %d tasks", total, len(a.DAG.Tasks))
	}
	checkDAG(t, a.DAG)

	// Dependencies a task reads directly, and that no other dependency
	// implies, are capped at maxDeps.
	var sb strings.Builder
	for i := range 60 {
		sb.WriteString("const r" + strconv.Itoa(i) + " = await mcp.a.b();\n")
	}
	sb.WriteString("await mcp.c.d({ all: [")
	for i := range 60 {
		sb.WriteString("r" + strconv.Itoa(i) + ",")
	}
	sb.WriteString("] })")
	a, err = Analyze(sb.String())
	if err != nil {
		t.Fatal(err)
	}
	last := a.DAG.Tasks[len(a.DAG.Tasks)-1]
	if len(last.DependsOn) != maxDeps || last.Layer != 1 {
		t.Errorf("fan-in task: %d deps, layer %d; want %d deps, layer 1", len(last.DependsOn), last.Layer, maxDeps)
	}
}

// Expressions nested beyond what the JavaScript parser takes fall back to a
// token scan: tools still found, Dynamic set.
func TestParserLimitFallsBackToTokens(t *testing.T) {
	code := "const r = args.a" + strings.Repeat(" ?? await mcp.a.b()", 1100) + ` ?? await mcp["c"]["d"]();`
	a, err := Analyze(code)
	if err != nil {
		t.Fatal(err)
	}
	if !a.Dynamic || len(a.Tools) != 2 || a.Tools[0] != "a:b" || a.Tools[1] != "c:d" || len(a.DAG.Tasks) != 1101 {
		t.Fatalf("dynamic %v, tools %v, %d tasks; want true, [a:b c:d], 1101", a.Dynamic, a.Tools, len(a.DAG.Tasks))
	}
	checkDAG(t, a.DAG)
}
