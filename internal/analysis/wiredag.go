package analysis

import (
	"encoding/json"

	"github.com/pml-go/pml/internal/wire"
)

// WireDAG is a's plan as the wire carries it, in execute_locally answers
// and in every trace: the one conversion, so both sides send the same
// shape. Computed once per Analysis, which the analysis cache shares
// between the runs of the same code, with its JSON (WireDAGJSON): every
// run's trace carries it. Callers must not change it.
func (a *Analysis) WireDAG() *wire.DAG {
	a.wireOnce.Do(a.toWire)
	return a.wireDAG
}

// WireDAGJSON is WireDAG encoded, computed once per Analysis. Callers must
// not change it.
func (a *Analysis) WireDAGJSON() json.RawMessage {
	a.wireOnce.Do(a.toWire)
	return a.wireJSON
}

func (a *Analysis) toWire() {
	d := &wire.DAG{Tasks: make([]wire.DAGTask, 0, len(a.DAG.Tasks))}
	for _, t := range a.DAG.Tasks {
		d.Tasks = append(d.Tasks, wire.DAGTask{ID: t.ID, Tool: t.Tool, DependsOn: wire.NonNil(t.DependsOn), Layer: t.Layer, After: t.After, Loops: t.Loops})
	}
	for _, c := range a.DAG.Decisions {
		w := wire.DAGDecision{ID: c.ID, Kind: c.Kind, Condition: c.Condition, DependsOn: wire.NonNil(c.DependsOn),
			Branches: make([]wire.DAGBranch, 0, len(c.Branches))}
		for _, b := range c.Branches {
			w.Branches = append(w.Branches, wire.DAGBranch{Label: b.Label, Nodes: wire.NonNil(b.Nodes)})
		}
		d.Decisions = append(d.Decisions, w)
	}
	a.wireDAG = d
	a.wireJSON, _ = json.Marshal(d) // strings and ints only: cannot fail
}
