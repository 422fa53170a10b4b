package analysis

import (
	"fmt"
	"strings"
	"testing"
)

// dagString renders a DAG as "t1(tool)@layer<-deps" items, to compare whole
// DAGs in one line.
func dagString(d DAG) string {
	var parts []string
	for _, t := range d.Tasks {
		parts = append(parts, fmt.Sprintf("%s(%s)@%d<-%s", t.ID, t.Tool, t.Layer, strings.Join(t.DependsOn, ",")))
	}
	return strings.Join(parts, " ")
}

func TestDataDependencies(t *testing.T) {
	tests := []struct{ name, code, want string }{
		{
			"independent calls share a layer even when awaited in sequence",
			"await mcp.a.x();\nawait mcp.b.y();\nawait mcp.c.z({ n: 1 })",
			"t1(a:x)@0<- t2(b:y)@0<- t3(c:z)@0<-",
		},
		{
			"direct field",
			"const a = await mcp.x.y();\nconst b = await mcp.z.w({ v: a.field });\nreturn b",
			"t1(x:y)@0<- t2(z:w)@1<-t1",
		},
		{
			"through derived variables",
			"const a = await mcp.x.list();\nconst n = a.items.length * 2;\nconst label = `count ${n}`;\nawait mcp.log.info({ label })",
			"t1(x:list)@0<- t2(log:info)@1<-t1",
		},
		{
			"destructuring",
			"const { items, total } = await mcp.x.list();\nconst [first] = items;\nawait mcp.y.get({ id: first.id });\nawait mcp.y.count({ total: 3 })",
			"t1(x:list)@0<- t2(y:get)@1<-t1 t3(y:count)@0<-",
		},
		{
			"chain and diamond",
			"const a = await mcp.s.a();\nconst b = await mcp.s.b({ a });\nconst c = await mcp.s.c({ a });\nawait mcp.s.d({ b, c })",
			"t1(s:a)@0<- t2(s:b)@1<-t1 t3(s:c)@1<-t1 t4(s:d)@2<-t2,t3",
		},
		{
			"Promise.all children share a layer; destructured results stay apart",
			"const [u, v] = await Promise.all([mcp.p.u(), mcp.p.v()]);\nawait mcp.q.use({ u });\nconst all = await Promise.all([mcp.p.u(), mcp.p.v()]);\nawait mcp.q.both({ all })",
			"t1(p:u)@0<- t2(p:v)@0<- t3(q:use)@1<-t1 t4(p:u)@0<- t5(p:v)@0<- t6(q:both)@1<-t4,t5",
		},
		{
			"a call nested in arguments runs, and is numbered, first",
			"await mcp.a.outer({ x: await mcp.b.inner() })",
			"t1(b:inner)@0<- t2(a:outer)@1<-t1",
		},
		{
			"branch tasks depend on what the condition reads",
			"const r = await mcp.c.check();\nif (r.ok) { await mcp.c.go() } else { await mcp.c.stop() }\nawait mcp.c.after()",
			"t1(c:check)@0<- t2(c:go)@1<-t1 t3(c:stop)@1<-t1 t4(c:after)@0<-",
		},
		{
			"ternary and logical operators are branches",
			"const r = await mcp.c.check();\nconst x = r.ok ? await mcp.c.yes() : 0;\nr.retry && await mcp.c.retry();",
			"t1(c:check)@0<- t2(c:yes)@1<-t1 t3(c:retry)@1<-t1",
		},
		{
			"loop body tasks depend on the loop header",
			"const list = await mcp.l.list();\nfor (const id of list.ids) { await mcp.l.touch({ stamp: 1 }) }\nlet more = await mcp.l.more();\nwhile (more.next) { more = await mcp.l.page({ token: 'x' }) }",
			"t1(l:list)@0<- t2(l:touch)@1<-t1 t3(l:more)@0<- t4(l:page)@1<-t3",
		},
		{
			"map callbacks receive the elements",
			"const files = await mcp.fs.list();\nconst texts = await Promise.all(files.map(async (f: any) => mcp.fs.read({ path: f.path })));\nawait mcp.fs.write({ data: texts.join('') })",
			"t1(fs:list)@0<- t2(fs:read)@1<-t1 t3(fs:write)@2<-t2",
		},
		{
			"then callbacks receive the result",
			"await mcp.a.get().then(r => mcp.a.put({ id: r.id }))",
			"t1(a:get)@0<- t2(a:put)@1<-t1",
		},
		{
			"mutation through methods and properties",
			"const acc: any[] = [];\nfor (const n of [1, 2]) acc.push(await mcp.a.item({ n }));\nconst box: any = {};\nbox.v = await mcp.a.v();\nawait mcp.a.sum({ acc, box })",
			"t1(a:item)@0<- t2(a:v)@0<- t3(a:sum)@1<-t1,t2",
		},
		{
			"local function parameters and return values",
			"async function read(p: string) { return mcp.fs.read({ path: p }) }\nconst list = await mcp.fs.list();\nconst text = await read(list[0]);\nawait mcp.out.put({ text })",
			"t1(fs:read)@1<-t2 t2(fs:list)@0<- t3(out:put)@2<-t1",
		},
		{
			"hoisted function called before its declaration",
			"const r = await main();\nawait mcp.z.last({ r });\nasync function main() { return mcp.z.first() }",
			"t1(z:last)@1<-t2 t2(z:first)@0<-",
		},
		{
			"calls of a function under a condition",
			"const f = async () => mcp.k.inside();\nconst c = await mcp.k.cond();\nif (c.go) await f();",
			"t1(k:inside)@1<-t2 t2(k:cond)@0<-",
		},
		{
			"catch reads the try block's calls",
			"try { await mcp.a.risky() } catch (e) { await mcp.log.error({ message: String(e) }) }",
			"t1(a:risky)@0<- t2(log:error)@1<-t1",
		},
		{
			"an assignment replaces what a variable held",
			"let x: any = await mcp.a.b();\nx = 1;\nawait mcp.c.d({ x })",
			"t1(a:b)@0<- t2(c:d)@0<-",
		},
		{
			"a branch may or may not replace it",
			"let x: any = await mcp.a.b();\nif (args.c) { x = await mcp.c.d(); x = await mcp.c.e({ x }) }\nawait mcp.f.g({ x })",
			"t1(a:b)@0<- t2(c:d)@0<- t3(c:e)@1<-t2 t4(f:g)@2<-t1,t3",
		},
		{
			"either branch",
			"let x: any;\nif (args.c) { x = await mcp.a.b() } else { x = await mcp.c.d() }\nawait mcp.e.f({ x })",
			"t1(a:b)@0<- t2(c:d)@0<- t3(e:f)@1<-t1,t2",
		},
		{
			"a function may set an outer variable",
			"let x: any = 1;\nconst set = async () => { x = await mcp.a.b() };\nawait set();\nawait mcp.c.d({ x })",
			"t1(a:b)@0<- t2(c:d)@1<-t1",
		},
		{
			"recursion is not a self dependency",
			"async function walk(n: number): Promise<void> { const r = await mcp.t.step({ n }); if (r.more) await walk(r.next) }\nawait walk(0)",
			"t1(t:step)@0<-",
		},
		{
			"mutual recursion: the cycle is broken",
			"async function f(x: any): Promise<any> { const r = await mcp.m.f({ x }); return g(r) }\nasync function g(y: any): Promise<any> { const s = await mcp.m.g({ y }); return f(s) }\nawait f(1)",
			"t1(m:f)@1<-t2 t2(m:g)@0<-",
		},
		{
			"a promise built around calls",
			"const r = await new Promise<any>(async (resolve) => resolve(await mcp.p.inner()));\nawait mcp.p.outer({ r })",
			"t1(p:inner)@0<- t2(p:outer)@1<-t1",
		},
		{
			"args are not results",
			"await mcp.a.b({ path: args.path })",
			"t1(a:b)@0<-",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := Analyze(tt.code)
			if err != nil {
				t.Fatal(err)
			}
			if got := dagString(a.DAG); got != tt.want {
				t.Errorf("DAG\n got %s\nwant %s", got, tt.want)
			}
			checkDAG(t, a.DAG)
		})
	}
}

// A chain of reassignments has one dependency per task, not a quadratic
// number.
func TestReassignmentChainStaysLinear(t *testing.T) {
	code := "let x: any = 0;\n" + strings.Repeat("x = await mcp.a.b({ x });\n", 500)
	a, err := Analyze(code)
	if err != nil {
		t.Fatal(err)
	}
	for i, task := range a.DAG.Tasks {
		if task.Layer != i || (i > 0 && (len(task.DependsOn) != 1 || task.DependsOn[0] != a.DAG.Tasks[i-1].ID)) {
			t.Fatalf("task %s: layer %d, deps %v", task.ID, task.Layer, task.DependsOn)
		}
	}
}

// checkDAG checks the DAG invariants: known ids, deps never nil, layers
// strictly increase along edges and are the longest path.
func checkDAG(t *testing.T, d DAG) {
	t.Helper()
	layer := map[string]int{}
	for _, task := range d.Tasks {
		layer[task.ID] = task.Layer
	}
	for _, task := range d.Tasks {
		if task.DependsOn == nil {
			t.Errorf("%s: DependsOn is nil", task.ID)
		}
		want := 0
		for _, dep := range task.DependsOn {
			l, ok := layer[dep]
			if !ok || dep == task.ID {
				t.Errorf("%s depends on unknown or itself: %s", task.ID, dep)
			}
			want = max(want, l+1)
		}
		if task.Layer != want {
			t.Errorf("%s layer %d; want %d", task.ID, task.Layer, want)
		}
	}
}
