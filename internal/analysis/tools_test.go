package analysis

import (
	"slices"
	"testing"
)

func TestToolDetection(t *testing.T) {
	tests := []struct {
		name    string
		code    string
		tools   []string
		tasks   int
		dynamic bool
	}{
		{"statement", "await mcp.fs.read_file({ path: '/a' })", []string{"fs:read_file"}, 1, false},
		{"no await", "mcp.fs.read_file({})", []string{"fs:read_file"}, 1, false},
		{"expression", "return (await mcp.math.add({a: 1})) + 1", []string{"math:add"}, 1, false},
		{"argument of a call", "console.log(JSON.stringify(await mcp.a.b()))", []string{"a:b"}, 1, false},
		{"argument of a tool call", "await mcp.a.b({ x: await mcp.c.d() })", []string{"a:b", "c:d"}, 2, false},
		{"template literal", "return `got ${await mcp.a.b()} and ${(await mcp.c.d()).x}`", []string{"a:b", "c:d"}, 2, false},
		{"arrow callback", "const items: string[] = ['a'];\nawait Promise.all(items.map(async x => mcp.fs.read({path: x})))", []string{"fs:read"}, 1, false},
		{"callback block body", "[1, 2].forEach(async (n) => { await mcp.log.info({ n }) })", []string{"log:info"}, 1, false},
		{"then callback", "await mcp.a.b().then(r => mcp.c.d({ r }))", []string{"a:b", "c:d"}, 2, false},
		{"nested function", "async function go(p: string) { return mcp.fs.read({ path: p }) }\nreturn go('x')", []string{"fs:read"}, 1, false},
		{"function expression", "const go = async function () { return mcp.a.b() };\nawait go()", []string{"a:b"}, 1, false},
		{"arrow in object", "const api = { get: () => mcp.a.get(), put: async function () { await mcp.a.put() } }", []string{"a:get", "a:put"}, 2, false},
		{"class method", "class S { async run() { return mcp.svc.run() } }\nreturn new S().run()", []string{"svc:run"}, 1, false},
		{"never-called function still counts", "function unused() { return mcp.x.y() }", []string{"x:y"}, 1, false},
		{"bracket form", `await mcp["fs"]["read_file"]({})`, []string{"fs:read_file"}, 1, false},
		{"mixed bracket form", `await mcp.fs["read_file"]({})`, []string{"fs:read_file"}, 1, false},
		{"template key", "await mcp[`fs`][`read`]({})", []string{"fs:read"}, 1, false},
		{"non-identifier names", `await mcp["my-server"]["do.it"]({})`, []string{"my-server:do.it"}, 1, false},
		{"optional chaining", "await mcp?.fs?.read?.({})", []string{"fs:read"}, 1, false},
		{"parenthesized", "await (mcp.fs).read({})", []string{"fs:read"}, 1, false},
		{"globalThis.mcp", "await globalThis.mcp.fs.read({})", []string{"fs:read"}, 1, false},
		{"this.mcp", "await this.mcp.fs.read({})", []string{"fs:read"}, 1, false},
		{"first appearance order, no duplicates", "await mcp.b.x(); await mcp.a.y(); await mcp.b.x()", []string{"b:x", "a:y"}, 3, false},
		{"all branches", "if (args.a) { await mcp.a.one() } else if (args.b) { await mcp.b.two() } else { await mcp.c.three() }", []string{"a:one", "b:two", "c:three"}, 3, false},
		{"switch cases", "switch (args.k) { case 1: await mcp.a.x(); break; default: await mcp.b.y() }", []string{"a:x", "b:y"}, 2, false},
		{"ternary and logical", "const r = args.x ? await mcp.a.x() : await mcp.b.y();\nargs.z && await mcp.c.z();\nargs.w || await mcp.d.w();\nargs.v ?? await mcp.e.v()", []string{"a:x", "b:y", "c:z", "d:w", "e:v"}, 5, false},
		{"loops", "for (let i = 0; i < 3; i++) await mcp.a.for();\nfor (const k in args) await mcp.a.in();\nfor (const v of [1]) await mcp.a.of();\nwhile (false) await mcp.a.while();\ndo { await mcp.a.do() } while (false)", []string{"a:for", "a:in", "a:of", "a:while", "a:do"}, 5, false},
		{"try catch finally", "try { await mcp.a.try() } catch (e) { await mcp.a.catch() } finally { await mcp.a.finally() }", []string{"a:try", "a:catch", "a:finally"}, 3, false},
		{"labelled", "outer: for (const x of [1]) { for (const y of [2]) { await mcp.a.b({x, y}); continue outer } }", []string{"a:b"}, 1, false},
		{"string is not a call", `const s = "mcp.fs.read({})"; return s`, nil, 0, false},
		{"template text is not a call", "return `mcp.fs.read(${1})`", nil, 0, false},
		{"comment is not a call", "// await mcp.fs.read({})\n/* mcp.shell.exec({}) */\nreturn 1", nil, 0, false},
		{"regexp is not a call", "return /mcp.fs.read\\(/.test('x')", nil, 0, false},
		{"shadowed mcp is not the proxy", "const mcp = { a: { b: () => 1 } };\nreturn mcp.a.b()", nil, 0, false},
		{"parameter named mcp", "const f = (mcp: any) => mcp.a.b();\nreturn 1", nil, 0, false},
		{"other objects", "const o = { fs: { read: () => 1 } };\nreturn o.fs.read()", nil, 0, false},
		{"tool reference", "const read = mcp.fs.read;\nreturn await read({ path: 'x' })", []string{"fs:read"}, 1, false},
		{"destructured tool", "const { read, write } = mcp.fs;\nawait write({ data: await read({}) })", []string{"fs:read", "fs:write"}, 2, false},
		{"typeof probe", "if (typeof mcp.fs.read === 'function') {}", []string{"fs:read"}, 0, false},

		{"computed namespace", "const ns = args.ns as string;\nawait mcp[ns].run({})", nil, 0, true},
		{"computed action", "const a = 'read';\nawait mcp.fs[a]({})", nil, 0, true},
		{"alias of mcp", "const m = mcp;\nawait m.fs.read({})", []string{"fs:read"}, 1, true},
		{"destructured namespace", "const { fs } = mcp;\nawait fs.read_file({})", []string{"fs:read_file"}, 1, true},
		{"namespace alias", "const fs = mcp.fs;\nawait fs.read({})", []string{"fs:read"}, 1, true},
		{"mcp passed to a function", "function use(x: any) { return x.fs.read({}) }\nawait use(mcp)", nil, 0, true},
		{"mcp enumerated", "return Object.keys(mcp)", nil, 0, true},
		{"mcp assigned later", "let m: any;\nm = mcp;\nawait m.a.b()", []string{"a:b"}, 1, true},
		{"mcp in array", "const list = [mcp];\nreturn list", nil, 0, true},
		{"eval", "return eval('mcp.fs.read({})')", nil, 0, true},
		{"Function", "return new Function('return mcp')()", nil, 0, true},
		{"Function through constructor", "return (() => 1).constructor('return mcp')()", nil, 0, true},
		{"globalThis computed", "const k = 'm' + 'cp';\nreturn globalThis[k]", nil, 0, true},
		{"bare this", "const g = this;\nreturn g", nil, 0, true},
		{"calling a namespace", "await mcp.fs({})", nil, 0, true},
		{"rest of mcp", "const { fs, ...others } = mcp;\nreturn others", nil, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := Analyze(tt.code)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(a.Tools, nonNil(tt.tools)) {
				t.Errorf("tools %q; want %q", a.Tools, tt.tools)
			}
			if len(a.DAG.Tasks) != tt.tasks {
				t.Errorf("%d tasks %v; want %d", len(a.DAG.Tasks), a.DAG.Tasks, tt.tasks)
			}
			if a.Dynamic != tt.dynamic {
				t.Errorf("dynamic %v; want %v", a.Dynamic, tt.dynamic)
			}
			for _, task := range a.DAG.Tasks {
				if !slices.Contains(a.Tools, task.Tool) {
					t.Errorf("task %s tool %s missing from tools %v", task.ID, task.Tool, a.Tools)
				}
			}
		})
	}
}
