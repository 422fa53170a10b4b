package analysis

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestLiftToolArguments(t *testing.T) {
	cases := []struct {
		name, code, want string
		params           []string // name=json value
		variants         []string
	}{
		{
			name:   "direct literal",
			code:   `const t = await mcp.filesystem.read_file({path: "a.json"}); const p = await mcp.json.parse({data: t}); return p.items.length`,
			want:   `const t = await mcp.filesystem.read_file({path: args.path}); const p = await mcp.json.parse({data: t}); return p.items.length`,
			params: []string{`path="a.json"`},
		},
		{
			name:   "second path, const, array, nested object; a number and a flag configure",
			code:   "const out = \"b.txt\";\nawait mcp.fs.copy({path: 'a.txt', to: out, opts: {limit: -3, tags: [\"x\", [1, 2]], deep: {ok: true}}});\nreturn await mcp.fs.read({path: out})",
			want:   "const out = args.to;\nawait mcp.fs.copy({path: args.path, to: out, opts: {limit: -3, tags: args.tags, deep: {ok: true}}});\nreturn await mcp.fs.read({path: out})",
			params: []string{`to="b.txt"`, `path="a.txt"`, `tags=["x",[1,2]]`},
		},
		{
			name:     "a setting that varied is a parameter",
			code:     `const t = await mcp.fs.read({path: "a.txt", limit: 3}); return await mcp.string.split({text: t, separator: ",", all: true})`,
			variants: []string{`const t = await mcp.fs.read({path: "b.txt", limit: 5}); return await mcp.string.split({text: t, separator: ";", all: true})`},
			want:     `const t = await mcp.fs.read({path: args.path, limit: args.limit}); return await mcp.string.split({text: t, separator: args.separator, all: true})`,
			params:   []string{`path="a.txt"`, `limit=3`, `separator=","`},
		},
		{
			name:     "a skill called by its qualified name, and a tool by a quoted action",
			code:     `const n = await mcp["acme.web.cap"].parse_add_math({data: "[1]"}); const m = await mcp.json["parse"]({data: "[7]"}); return n * 2 + m.length`,
			variants: []string{`const n = await mcp["acme.web.cap"].parse_add_math({data: "[1,2]"}); const m = await mcp.json["parse"]({data: "[7]"}); return n * 2 + m.length`},
			want:     `const n = await mcp["acme.web.cap"].parse_add_math({data: args.data}); const m = await mcp.json["parse"]({data: args.data_2}); return n * 2 + m.length`,
			params:   []string{`data="[1]"`, `data_2="[7]"`},
		},
		{
			name:   "collision with the code's own args",
			code:   `const a = await mcp.fs.read({path: args.path}); return await mcp.fs.read({path: "z", n: 2})`,
			want:   `const a = await mcp.fs.read({path: args.path}); return await mcp.fs.read({path: args.path_2, n: 2})`,
			params: []string{`path_2="z"`},
		},
		{
			name:     "varying literal outside tool arguments, template text",
			code:     "const t = await mcp.fs.read({path: `a.csv`}); return t.split(\",\").map(x => `row ${x} of a`).concat(await mcp.json.parse({data: \"[]\"}))",
			variants: []string{"const t = await mcp.fs.read({path: `b.csv`}); return t.split(\";\").map(x => `row ${x} of b`).concat(await mcp.json.parse({data: \"[]\"}))"},
			want:     "const t = await mcp.fs.read({path: args.path}); return t.split(args.separator).map(x => `row ${x}${args.text}`).concat(await mcp.json.parse({data: args.data}))",
			params:   []string{`path="a.csv"`, `separator=","`, `text=" of a"`, `data="[]"`},
		},
	}
	cases = append(cases, []struct {
		name, code, want string
		params           []string
		variants         []string
	}{{
		name: "a path derived from another parameter is an expression of it",
		code: `const entries = await mcp.filesystem.list_directory({path: "guides"});
const md = entries.filter(e => e.type === "file" && e.name.endsWith(".md"));
return await Promise.all(md.map(async e => (await mcp.filesystem.read_file({path: "guides/" + e.name})).length));`,
		variants: []string{`const entries = await mcp.filesystem.list_directory({path: "notes"});
const md = entries.filter(e => e.type === "file" && e.name.endsWith(".md"));
return await Promise.all(md.map(async e => (await mcp.filesystem.read_file({path: "notes/" + e.name})).length));`},
		want: `const entries = await mcp.filesystem.list_directory({path: args.path});
const md = entries.filter(e => e.type === "file" && e.name.endsWith(".md"));
return await Promise.all(md.map(async e => (await mcp.filesystem.read_file({path: (args.path + "/") + e.name})).length));`,
		params: []string{`path="guides"`},
	}, {
		name:     "a list of literals is one parameter whatever its length",
		code:     `const people = ["Ann", "Bo"]; const s = await mcp.json.stringify({value: people.map(p => p.toUpperCase())}); return s`,
		variants: []string{`const people = ["Cy"]; const s = await mcp.json.stringify({value: people.map(p => p.toUpperCase())}); return s`},
		want:     `const people = args.people; const s = await mcp.json.stringify({value: people.map(p => p.toUpperCase())}); return s`,
		params:   []string{`people=["Ann","Bo"]`},
	}, {
		name:     "values named by what they are compared with and what they mean to a method",
		code:     `const rows = await mcp.json.parse({data: args.data}); return rows.filter(r => r.region === "north").slice(0, 3)`,
		variants: []string{`const rows = await mcp.json.parse({data: args.data}); return rows.filter(r => r.region === "south").slice(0, 5)`},
		want:     `const rows = await mcp.json.parse({data: args.data}); return rows.filter(r => r.region === args.region).slice(0, args.count)`,
		params:   []string{`region="north"`, `count=3`},
	}, {
		name:     "the first place a value appears names it; a keyword is a name too",
		code:     `const e = await mcp.fs.list({path: "p"}); const d = await mcp.datetime.diff({from: "2024-01-01", to: "2024-02-01"}); return [d, e.filter(x => x.endsWith(".jpg")).map(x => x.replace(".jpg", ".png"))]`,
		variants: []string{`const e = await mcp.fs.list({path: "q"}); const d = await mcp.datetime.diff({from: "2024-03-01", to: "2024-04-01"}); return [d, e.filter(x => x.endsWith(".gif")).map(x => x.replace(".gif", ".webp"))]`},
		want:     `const e = await mcp.fs.list({path: args.path}); const d = await mcp.datetime.diff({from: args.from, to: args.to}); return [d, e.filter(x => x.endsWith(args.suffix)).map(x => x.replace(args.suffix, args.replacement))]`,
		params:   []string{`path="p"`, `from="2024-01-01"`, `to="2024-02-01"`, `suffix=".jpg"`, `replacement=".png"`},
	}, {
		name:     "quotes are no value",
		code:     `const t = await mcp.fs.read({path: 'a.txt'}); return t.split(',')`,
		variants: []string{`const t = await mcp.fs.read({path: "a.txt"}); return t.split(",")`},
		want:     `const t = await mcp.fs.read({path: args.path}); return t.split(',')`,
		params:   []string{`path="a.txt"`},
	}}...)
	cases = append(cases, struct {
		name, code, want string
		params           []string
		variants         []string
	}{
		name:     "varying values in a list of objects are named by their keys",
		code:     `await mcp.memory.create({entities: [{name: "alice", kind: "person"}]}); return 1`,
		variants: []string{`await mcp.memory.create({entities: [{name: "bob", kind: "person"}]}); return 1`},
		want:     `await mcp.memory.create({entities: [{name: args.name, kind: "person"}]}); return 1`,
		params:   []string{`name="alice"`},
	})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := Lift(c.code, c.variants...)
			if !ok {
				t.Fatal("not lifted")
			}
			if got.Code != c.want {
				t.Errorf("code\n got %s\nwant %s", got.Code, c.want)
			}
			var ps []string
			for _, p := range got.Params {
				ps = append(ps, p.Name+"="+string(p.JSONValue()))
			}
			b1, _ := json.Marshal(ps)
			b2, _ := json.Marshal(c.params)
			if string(b1) != string(b2) {
				t.Errorf("params %s, want %s", b1, b2)
			}
			// Each run's values written back give that run's tokens.
			if !GivesBack(got.Code, got.Params, c.code) {
				t.Errorf("the first run's values do not give it back")
			}
			for _, v := range c.variants {
				lv, ok := Lift(v, c.code)
				if !ok || !GivesBack(got.Code, lv.Params, v) {
					t.Errorf("the variant's values do not give it back: %s", v)
				}
			}
		})
	}
}

func TestSubstituteUndoesLift(t *testing.T) {
	for _, code := range []string{
		`const t = await mcp.filesystem.read_file({path: "a.json"}); const p = await mcp.json.parse({data: t}); return p.items.length`,
		"const o = {k: 1}; await mcp.fs.copy({path: 'a.txt', to: \"x`${y}\", opts: {limit: -3, tags: [\"x\", [1, 2]]}, n: 2.5, ok: false}); return `got ${o.k} now`",
	} {
		l, ok := Lift(code, "const o = {k: 2}; await mcp.fs.copy({path: 'a.txt', to: \"x`${y}\", opts: {limit: -3, tags: [\"x\", [1, 2]]}, n: 2.5, ok: false}); return `got ${o.k} then`")
		if !ok {
			l, ok = Lift(code)
		}
		if !ok {
			t.Fatalf("not lifted: %s", code)
		}
		roundTrip(t, code, l)
	}
}

// roundTrip checks that l, lifted from code, reads each parameter from
// args and, with their values written back, has code's shape.
func roundTrip(t *testing.T, code string, l Lifted) {
	t.Helper()
	values := map[string]any{}
	for _, p := range l.Params {
		if !strings.Contains(l.Code, "args."+p.Name) {
			t.Fatalf("parameter %s is not read: %s", p.Name, l.Code)
		}
		var v any
		if err := json.Unmarshal(p.JSONValue(), &v); err != nil {
			t.Fatalf("parameter %s: %s is not JSON: %v", p.Name, p.JSONValue(), err)
		}
		values[p.Name] = v
	}
	back, ok := Substitute(l.Code, values)
	if !ok {
		t.Fatalf("substitute failed: %s", l.Code)
	}
	if ShapeOf(back).Hash != ShapeOf(code).Hash {
		t.Fatalf("values written back give another shape:\n%s\nfrom %s", back, code)
	}
}

// Lift on any input: no panic; what it lifts parses, reads its parameters
// from args, and with their values written back has the original's shape.
func FuzzLift(f *testing.F) {
	for _, seed := range []string{
		`const t = await mcp.filesystem.read_file({path: "a.json"}); return t`,
		"await mcp.a.b({x: [1, [2, 3]], y: {z: -4, w: `t`}, v: true}); return `a${1}b`",
		`const p = "x"; await mcp.a.b({p, q: p}); return args.p`,
		`await mcp["a"].b({x: 1})`, `await mcp.a.b({["k"]: 1})`, `const args = 1; await mcp.a.b({x: 2})`,
		"const s = '\\u{1F600}'; await mcp.a.b({s: \"\\\"\\\\\", t: 'it\\'s'})",
	} {
		f.Add(seed, seed)
	}
	f.Fuzz(func(t *testing.T, code, variant string) {
		if len(code) > 4096 || len(variant) > 4096 {
			return
		}
		if _, err := Analyze(code); err != nil {
			return // learning lifts only code that ran, so analysed
		}
		l, ok := Lift(code, variant)
		if !ok {
			l, ok = Lift(code)
		}
		if !ok || len(l.Params) == 0 {
			return
		}
		if _, err := Analyze(l.Code); err != nil {
			t.Fatalf("lifted code does not analyse: %v\n%s\nfrom %s", err, l.Code, code)
		}
		roundTrip(t, code, l)
	})
}

// A snippet with more literals than MaxParams lifts the first MaxParams and
// leaves the rest in the code.
func TestLiftIsBounded(t *testing.T) {
	var b strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&b, "await mcp.a.b({x: \"v%d\"});\n", i)
	}
	l, ok := Lift(b.String())
	if !ok || len(l.Params) != MaxParams || !strings.Contains(l.Code, `{x: "v4999"}`) || !strings.Contains(l.Code, "{x: args.x_64}") {
		t.Fatalf("%v %d params", ok, len(l.Params))
	}
}
