package analysis

import (
	"encoding/json"
	"strings"
	"testing"
)

func nodesString(s StaticStructure) string {
	var parts []string
	for _, n := range s.Nodes {
		p := n.ID + ":" + n.Type
		if n.Tool != "" {
			p += ":" + n.Tool
		}
		if n.Kind != "" {
			p += ":" + n.Kind
		}
		if n.Condition != "" {
			p += "[" + n.Condition + "]"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, " ")
}

func edgesString(s StaticStructure) string {
	var parts []string
	for _, e := range s.Edges {
		p := e.From + "->" + e.To + ":" + e.Type
		if e.Label != "" {
			p += "=" + e.Label
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, " ")
}

func TestStaticStructure(t *testing.T) {
	tests := []struct{ name, code, nodes, edges string }{
		{
			"if else",
			"const r = await mcp.a.check();\nif (r.ok) { await mcp.a.yes() } else { await mcp.a.no() }",
			"t1:task:a:check d1:decision:if[r.ok] t2:task:a:yes t3:task:a:no",
			"t1->d1:sequence t1->t2:sequence d1->t2:conditional=true t1->t3:sequence d1->t3:conditional=false",
		},
		{
			"switch",
			"switch (args.mode) { case 'a': await mcp.m.a(); break; case 'b': case 'c': await mcp.m.bc(); break; default: await mcp.m.other() }",
			"d1:decision:switch[args.mode] t1:task:m:a t2:task:m:bc t3:task:m:other",
			`d1->t1:conditional="a" d1->t2:conditional="c" d1->t3:conditional=default`,
		},
		{
			"ternary, and, or, nullish",
			"const x = args.a ? await mcp.t.yes() : await mcp.t.no();\nargs.b && await mcp.t.and();\nargs.c || await mcp.t.or();\nargs.d ?? await mcp.t.nullish();",
			"d1:decision:ternary[args.a] t1:task:t:yes t2:task:t:no d2:decision:and[args.b] t3:task:t:and d3:decision:or[args.c] t4:task:t:or d4:decision:nullish[args.d] t5:task:t:nullish",
			"d1->t1:conditional=true d1->t2:conditional=false d2->t3:conditional=true d3->t4:conditional=false d4->t5:conditional=nullish",
		},
		{
			"loops",
			"for (let i = 0; i < 2; i++) await mcp.l.for();\nfor (const k in args) await mcp.l.in();\nfor (const v of [1]) await mcp.l.of();\nwhile (args.w) await mcp.l.while();\ndo { await mcp.l.do() } while (args.d)\nargs.xs.map((x: any) => mcp.l.map({ x }))",
			"l1:loop:for[let i = 0; i < 2; i++] t1:task:l:for l2:loop:for_in[const k in args] t2:task:l:in l3:loop:for_of[const v of [1]] t3:task:l:of l4:loop:while[args.w] t4:task:l:while l5:loop:do_while[args.d] t5:task:l:do l6:loop:map[args.xs] t6:task:l:map",
			"l1->t1:loop_body l2->t2:loop_body l3->t3:loop_body l4->t4:loop_body l5->t5:loop_body l6->t6:loop_body",
		},
		{
			"fork and join",
			"const [a, b] = await Promise.all([mcp.f.a(), mcp.f.b()]);\nconst first = await Promise.race([mcp.f.c(), mcp.f.d()]);\nawait mcp.f.after({ a, first })",
			"f1:fork:all t1:task:f:a t2:task:f:b j1:join:all f2:fork:race t3:task:f:c t4:task:f:d j2:join:race t5:task:f:after",
			"f1->t1:fork f1->t2:fork t1->j1:join t2->j1:join f2->t3:fork f2->t4:fork t3->j2:join t4->j2:join t1->t5:sequence t3->t5:sequence t4->t5:sequence",
		},
		{
			"nested: loop in a branch, fork over a map",
			"if (args.go) { for (const x of args.xs) { await mcp.n.one({ x }) } }\nawait Promise.allSettled(args.ys.map((y: any) => mcp.n.two({ y })))",
			"d1:decision:if[args.go] l1:loop:for_of[const x of args.xs] t1:task:n:one f1:fork:allSettled l2:loop:map[args.ys] t2:task:n:two j1:join:allSettled",
			"l1->t1:loop_body d1->l1:conditional=true l2->t2:loop_body f1->l2:fork l2->j1:join",
		},
		{
			"control nodes without tasks are left out",
			"if (args.x) { console.log(1) }\nfor (const y of [1]) {}\nconst z = args.z ? 1 : 2;\nawait mcp.only.task()",
			"t1:task:only:task",
			"",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := Analyze(tt.code)
			if err != nil {
				t.Fatal(err)
			}
			if got := nodesString(a.Structure); got != tt.nodes {
				t.Errorf("nodes\n got %s\nwant %s", got, tt.nodes)
			}
			if got := edgesString(a.Structure); got != tt.edges {
				t.Errorf("edges\n got %s\nwant %s", got, tt.edges)
			}
		})
	}
}

func TestTaskArgs(t *testing.T) {
	tests := []struct{ name, code, want string }{
		{"scalars", `await mcp.a.b({ n: 1, f: -2.5, big: 1e21, hex: 0xff, sep: 1_000, s: 'it\'s', d: "q\"\n", t: true, no: false, nil: null })`,
			`{"n":1,"f":-2.5,"big":1e+21,"hex":255,"sep":1000,"s":"it's","d":"q\"\n","t":true,"no":false,"nil":null}`},
		{"nested", "await mcp.a.b({ o: { list: [1, 'two', [3]], 'quoted-key': 1, 42: 'n' } })",
			`{"o":{"list":[1,"two",[3]],"quoted-key":1,"42":"n"}}`},
		{"unicode escapes", `await mcp.a.b({ s: "\u00e9\u{1F600}\x41" })`, `{"s":"é😀A"}`},
		{"template without substitutions", "await mcp.a.b({ s: `line1\nline2` })", `{"s":"line1\nline2"}`},
		{"scalar argument", "await mcp.a.b('just a string')", `"just a string"`},
		{"no argument", "await mcp.a.b()", ``},
		{"refs to earlier results", "const r = await mcp.a.r();\nconst { items } = await mcp.a.l();\nawait mcp.a.b({ whole: r, field: r.data.x, idx: items[0], key: r['k'], inline: (await mcp.a.i()).v })",
			`{"whole":{"$ref":"t1"},"field":{"$ref":"t1.data.x"},"idx":{"$ref":"t2.items[0]"},"key":{"$ref":"t1.k"},"inline":{"$ref":"t3.v"}}`},
		{"refs through Promise.all and loops", "const [a, b] = await Promise.all([mcp.p.a(), mcp.p.b()]);\nfor (const x of b.list) await mcp.p.c({ a: a.id, x: x.name })",
			`{"a":{"$ref":"t1.id"},"x":{"$ref":"t2.list[].name"}}`},
		{"expressions", "const n = 2;\nawait mcp.a.b({ sum: n + 1, call: Math.max(1, n), path: args.path, neg: -n, big: 10n })",
			`{"sum":{"$expr":"n + 1"},"call":{"$expr":"Math.max(1, n)"},"path":{"$expr":"args.path"},"neg":{"$expr":"-n"},"big":{"$expr":"10n"}}`},
		{"spread makes the whole object an expression", "const base = { a: 1 };\nawait mcp.a.b({ ...base, c: 2 })", `{"$expr":"{...base, c: 2}"}`},
		{"computed key", "const k = 'x';\nawait mcp.a.b({ [k]: 1 })", `{"$expr":"{[k]: 1}"}`},
		{"array holes", "await mcp.a.b([1, , 3])", `[1,null,3]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := Analyze(tt.code)
			if err != nil {
				t.Fatal(err)
			}
			var last Node
			for _, n := range a.Structure.Nodes {
				if n.Type == NodeTask {
					last = n
				}
			}
			if string(last.Args) != tt.want {
				t.Errorf("args %s; want %s", last.Args, tt.want)
			}
			if len(last.Args) > 0 && !json.Valid(last.Args) {
				t.Errorf("args are not valid JSON: %s", last.Args)
			}
		})
	}
}

// The JSON shapes other components read.
func TestAnalysisJSON(t *testing.T) {
	a, err := Analyze("await mcp.a.b({ x: 1 })")
	if err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		DAG struct {
			Tasks []map[string]any `json:"tasks"`
		} `json:"dag"`
		Structure struct {
			Nodes []map[string]any `json:"nodes"`
			Edges []map[string]any `json:"edges"`
		} `json:"static_structure"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.DAG.Tasks) != 1 || got.Structure.Edges == nil {
		t.Fatalf("unexpected JSON %s", out)
	}
	deps, ok := got.DAG.Tasks[0]["depends_on"].([]any)
	if !ok || len(deps) != 0 {
		t.Errorf("depends_on %v; want []", got.DAG.Tasks[0]["depends_on"])
	}
	if !strings.Contains(string(out), `"edges":[]`) {
		t.Errorf("edges do not marshal as []: %s", out)
	}
}
