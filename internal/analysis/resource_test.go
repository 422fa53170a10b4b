package analysis

import (
	"encoding/json"
	"strings"
	"testing"
)

// afterString renders each task's ordering dependencies as "t2<-t1", the
// tasks without any left out.
func afterString(d DAG) string {
	var parts []string
	for _, t := range d.Tasks {
		if t.After != nil {
			parts = append(parts, t.ID+"<-"+strings.Join(t.After, ","))
		}
	}
	return strings.Join(parts, " ")
}

func TestSameResourceOrdering(t *testing.T) {
	tests := []struct{ name, code, want string }{
		{
			"a read after a write of the same literal path follows it",
			`await mcp.fs.write_file({ path: "a.txt", content: "x" }); return await mcp.fs.read_file({ path: "a.txt" })`,
			"t2<-t1",
		},
		{
			"unrelated paths are not ordered",
			`await mcp.fs.write_file({ path: "a.txt", content: "x" }); await mcp.fs.read_file({ path: "b.txt" })`,
			"",
		},
		{
			"a variable path is not ordered",
			`const p = args.p; await mcp.fs.write_file({ path: p, content: "x" }); await mcp.fs.read_file({ path: p })`,
			"",
		},
		{
			"only the latest earlier call on the resource, across keys",
			`await mcp.fs.write_file({ path: "a" }); await mcp.fs.copy({ source: "a", destination: "b" }); await mcp.fs.read_file({ file: "b" }); await mcp.fs.read_file({ path: "a" })`,
			"t2<-t1 t3<-t2 t4<-t2",
		},
		{
			"a data dependency already orders the calls",
			`const w = await mcp.fs.write_file({ path: "a" }); await mcp.fs.read_file({ path: "a", after: w })`,
			"",
		},
		{
			"other keys and non-object arguments name no resource",
			`await mcp.std.sha256({ text: "a" }); await mcp.std.sha256({ text: "a" }); await mcp.fs.read_file("a"); await mcp.fs.read_file("a")`,
			"",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			an := mustAnalyze(t, tt.code)
			if got := afterString(an.DAG); got != tt.want {
				t.Fatalf("after %q, want %q\n%s", got, tt.want, dagString(an.DAG))
			}
		})
	}
}

// The ordering leaves the data layers and depends_on as they were.
func TestSameResourceOrderingKeepsDataLayers(t *testing.T) {
	an := mustAnalyze(t, `await mcp.fs.write_file({ path: "a.txt" }); await mcp.fs.read_file({ path: "a.txt" })`)
	if got := dagString(an.DAG); got != "t1(fs:write_file)@0<- t2(fs:read_file)@0<-" {
		t.Fatalf("dag %s", got)
	}
	b, _ := json.Marshal(an.DAG.Tasks[1])
	if string(b) != `{"id":"t2","tool":"fs:read_file","depends_on":[],"layer":0,"after":["t1"]}` {
		t.Fatalf("task json %s", b)
	}
	b, _ = json.Marshal(an.DAG.Tasks[0])
	if strings.Contains(string(b), "after") {
		t.Fatalf("a task with no order carries after: %s", b)
	}
}

func TestDAGDecisions(t *testing.T) {
	an := mustAnalyze(t, `const r = await mcp.c.check();
if (r.ok) { for (const x of r.items) await mcp.c.go({ x }); if (r.z) await mcp.c.z() } else { await mcp.c.stop() }
await mcp.c.after()`)
	got, _ := json.Marshal(an.DAG.Decisions)
	want := `[{"id":"d1","kind":"if","condition":"r.ok","depends_on":["t1"],"branches":[{"label":"true","nodes":["t2","d2"]},{"label":"false","nodes":["t4"]}]},` +
		`{"id":"d2","kind":"if","condition":"r.z","depends_on":["t1"],"branches":[{"label":"true","nodes":["t3"]}]}]`
	if string(got) != want {
		t.Fatalf("decisions %s\nwant      %s", got, want)
	}
	// The ids are the StaticStructure's decision nodes.
	for _, d := range an.DAG.Decisions {
		found := false
		for _, n := range an.Structure.Nodes {
			found = found || (n.ID == d.ID && n.Type == NodeDecision && n.Condition == d.Condition)
		}
		if !found {
			t.Fatalf("decision %s is not a structure node", d.ID)
		}
	}
	// Loops name the loops around a site, outermost first.
	an = mustAnalyze(t, `for (const a of args.xs) { await mcp.c.one(); for (const b of a) await mcp.c.two() } await mcp.c.three()`)
	var loops []string
	for _, tk := range an.DAG.Tasks {
		loops = append(loops, tk.ID+":"+strings.Join(tk.Loops, ","))
	}
	if got := strings.Join(loops, " "); got != "t1:l1 t2:l1,l2 t3:" {
		t.Fatalf("loops %s", got)
	}
	if b, _ := json.Marshal(an.DAG.Tasks[2]); strings.Contains(string(b), "loops") {
		t.Fatalf("a task outside loops carries loops: %s", b)
	}
	// A decision with no task under it, and code without any, add nothing.
	for _, code := range []string{`if (args.x) { console.log(1) } await mcp.a.b()`, `await mcp.a.b()`} {
		an := mustAnalyze(t, code)
		if an.DAG.Decisions != nil {
			t.Fatalf("%s: decisions %+v", code, an.DAG.Decisions)
		}
		if b, _ := json.Marshal(an.DAG); strings.Contains(string(b), "decisions") {
			t.Fatalf("%s: dag %s", code, b)
		}
	}
}

func mustAnalyze(t *testing.T, code string) *Analysis {
	t.Helper()
	an, err := Analyze(code)
	if err != nil {
		t.Fatalf("analyze %q: %v", code, err)
	}
	return an
}
