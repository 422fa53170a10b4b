package runner

import (
	"github.com/pml-go/pml/internal/analysis"
	"github.com/pml-go/pml/internal/wire"
)

// DAG is the analysed plan as the wire carries it, in execute_locally
// answers and in every trace: the one conversion, so both sides send the
// same shape.
func DAG(an *analysis.Analysis) *wire.DAG {
	d := &wire.DAG{Tasks: make([]wire.DAGTask, 0, len(an.DAG.Tasks))}
	for _, t := range an.DAG.Tasks {
		d.Tasks = append(d.Tasks, wire.DAGTask{ID: t.ID, Tool: t.Tool, DependsOn: wire.NonNil(t.DependsOn), Layer: t.Layer, After: t.After, Loops: t.Loops})
	}
	for _, c := range an.DAG.Decisions {
		w := wire.DAGDecision{ID: c.ID, Kind: c.Kind, Condition: c.Condition, DependsOn: wire.NonNil(c.DependsOn),
			Branches: make([]wire.DAGBranch, 0, len(c.Branches))}
		for _, b := range c.Branches {
			w.Branches = append(w.Branches, wire.DAGBranch{Label: b.Label, Nodes: wire.NonNil(b.Nodes)})
		}
		d.Decisions = append(d.Decisions, w)
	}
	return d
}
