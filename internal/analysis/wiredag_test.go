package analysis

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/pml-go/pml/internal/wire"
)

// The wire DAG is the analysed plan in the JSON shape the analysis has.
func TestDAGKeepsTheAnalysedShape(t *testing.T) {
	an := mustAnalyze(t, `const a = await mcp.x.one({}); const [b, c] = await Promise.all([mcp.x.two(a), mcp.x.three({})]); return b`)
	got, _ := json.Marshal(an.WireDAG())
	want, _ := json.Marshal(an.DAG)
	if string(got) != string(want) || !strings.Contains(string(got), `"depends_on":[]`) {
		t.Fatalf("wire dag %s\nanalysis dag %s", got, want)
	}
}

// The order of calls on the same resource and the decisions reach the wire
// as fields added to the DAG; depends_on stays the data dependencies.
func TestDAGCarriesOrderAndDecisions(t *testing.T) {
	an := mustAnalyze(t, `await mcp.fs.write_file({ path: "a.txt", content: "x" });
const r = await mcp.fs.read_file({ path: "a.txt" });
if (r.ok) { await mcp.x.yes() } else { await mcp.x.no() }
for (const f of args.fs) await mcp.x.each({ f })`)
	got, _ := json.Marshal(an.WireDAG())
	want := `{"tasks":[{"id":"t1","tool":"fs:write_file","depends_on":[],"layer":0},` +
		`{"id":"t2","tool":"fs:read_file","depends_on":[],"layer":0,"after":["t1"]},` +
		`{"id":"t3","tool":"x:yes","depends_on":["t2"],"layer":1},{"id":"t4","tool":"x:no","depends_on":["t2"],"layer":1},` +
		`{"id":"t5","tool":"x:each","depends_on":[],"layer":0,"loops":["l1"]}],` +
		`"decisions":[{"id":"d1","kind":"if","condition":"r.ok","depends_on":["t2"],"branches":[{"label":"true","nodes":["t3"]},{"label":"false","nodes":["t4"]}]}]}`
	if string(got) != want {
		t.Fatalf("wire dag %s\nwant     %s", got, want)
	}
	if an, _ := json.Marshal(an.DAG); string(an) != want {
		t.Fatalf("analysis dag %s differs from the wire's", an)
	}
	var back wire.DAG
	if err := json.Unmarshal(got, &back); err != nil || back.Tasks[1].After[0] != "t1" || back.Decisions[0].Branches[1].Nodes[0] != "t4" || back.Tasks[4].Loops[0] != "l1" {
		t.Fatalf("round trip %+v %v", back, err)
	}
}

// WireDAGJSON is WireDAG's encoding, made once and shared by every caller.
func TestWireDAGIsMadeOnce(t *testing.T) {
	an := mustAnalyze(t, `const a = await mcp.x.one({}); return await mcp.x.two(a)`)
	want, _ := json.Marshal(an.WireDAG())
	got := an.WireDAGJSON()
	if string(got) != string(want) || an.WireDAG() != an.WireDAG() || &an.WireDAGJSON()[0] != &got[0] {
		t.Fatalf("WireDAGJSON %s, WireDAG encoded %s, or made again", got, want)
	}
}
