package gateway_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/wire"
)

// The learning policy, as discover shows it: code calling no tool and a
// single direct call of a tool are not learned; code differing only in
// whitespace, comments and literal values is one capability; an intent
// that reads like another capability's but uses other tools gets a name of
// its own instead of replacing it.
func TestLearningPolicyThroughDiscover(t *testing.T) {
	g := startRegistry(t)
	s := g.Connect(t, g.Key, false)
	for _, code := range []string{"return 1", "const x = 1", "return await mcp.math.add({a: 1, b: 2})", "mcp.math.add({a: 5, b: 2});"} {
		a := gatewaytest.Execute(t, s, wire.ExecuteRequest{Code: code, Intent: "add two numbers"})
		if a.Status != wire.StatusSuccess || a.Capability != nil {
			t.Errorf("%q: learned %+v (%s)", code, a.Capability, a.Status)
		}
	}
	first := learn(t, s, "const s = await mcp.math.add({a: 1, b: 2}); return s * 10", "")
	same := learn(t, s, "// other numbers\nconst s = await mcp.math.add({ a: 7, b: 8 })\nreturn s * 3", "")
	if same.ID != first.ID {
		t.Errorf("same shape, two capabilities: %+v %+v", first, same)
	}
	sum := learn(t, s, "const s = await mcp.math.add({a: args.a ?? 1, b: args.b ?? 2}); return s", "Sum it")
	clash := learn(t, s, "const t = await mcp.string.upper({text: args.t ?? 'x'}); return t", "Sum it!")
	if sum.Name != "cap:sum" || !strings.HasPrefix(clash.Name, "cap:sum_") || len(clash.Name) != len("cap:sum_")+4 {
		t.Errorf("names %s and %s", sum.Name, clash.Name)
	}
	again := learn(t, s, "const s = await mcp.math.add({a: (args.a ?? 1) + 1, b: args.b ?? 2}); return s", "Sum it")
	if again.Name != "cap:sum" || again.ID == sum.ID {
		t.Errorf("a new version under the same tools: %+v (was %+v)", again, sum)
	}
	text, isErr := callTool(t, s, "discover", wire.DiscoverRequest{Query: "add two numbers", Limit: 1000})
	if isErr {
		t.Fatal(text)
	}
	var d wire.DiscoverAnswer
	if err := json.Unmarshal([]byte(text), &d); err != nil {
		t.Fatal(err)
	}
	var caps []string
	for _, tl := range d.Tools {
		if tl.Kind == "capability" && strings.HasPrefix(tl.Description, "Learned workflow:") {
			caps = append(caps, tl.ID)
		}
	}
	if len(caps) != 1 || caps[0] != first.Name {
		t.Errorf("undescribed capabilities discovered: %v, want only %s", caps, first.Name)
	}
	// Rejected and merged runs leave the gateway serving.
	alive(t, s)
}
