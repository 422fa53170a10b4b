package analysis_test

import (
	"fmt"

	"github.com/pml-go/pml/internal/analysis"
)

func ExampleAnalyze() {
	a, err := analysis.Analyze(`const content: string = await mcp.filesystem.read_file({ path: "/tmp/data.json" });
const parsed = await mcp.json.parse({ text: content });
if (parsed.notify) {
  await mcp.slack.post({ channel: "#ops", text: parsed.summary });
}
return parsed;`)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(a.Tools, a.Dynamic)
	for _, t := range a.DAG.Tasks {
		fmt.Println(t.ID, t.Tool, t.DependsOn, t.Layer)
	}
	fmt.Println(string(a.Structure.Nodes[len(a.Structure.Nodes)-1].Args))
	// Output:
	// [filesystem:read_file json:parse slack:post] false
	// t1 filesystem:read_file [] 0
	// t2 json:parse [t1] 1
	// t3 slack:post [t2] 2
	// {"channel":"#ops","text":{"$ref":"t2.summary"}}
}

func ExampleAnalyzer_Analyze() {
	z := analysis.New(1024)
	_, err := z.Analyze("const x: number = ;")
	fmt.Println(err)
	// Output:
	// SYNTAX_ERROR: Unexpected ";" (line 1, column 19)
}
