package analysis

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sync"

	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/wire"
)

// MaxCodeBytes is the largest snippet Analyze accepts.
const MaxCodeBytes = 100 * 1024

// Analysis is what static analysis knows about one snippet. An Analysis
// returned by an Analyzer is shared between callers: treat it as read-only.
type Analysis struct {
	CodeHash string `json:"code_hash"` // hex SHA-256 of the original code
	// JS is the source of a parenthesized expression that evaluates to
	// `async function (args)` running the user's code: the sandbox evaluates
	// it and calls the result.
	JS        string          `json:"js"`
	Structure StaticStructure `json:"static_structure"`
	DAG       DAG             `json:"dag"`
	// Tools are the distinct tool ids ("ns:action") in order of first
	// appearance, including loop bodies and all branches.
	Tools []string `json:"tools"`
	// Dynamic means the code can reach tools the analysis cannot enumerate
	// (mcp[x], aliases of mcp, eval...): route it to the client.
	Dynamic bool `json:"dynamic"`
	// ArgsSchema is a JSON Schema (type object) inferred from how the code
	// reads `args`; nil when the code never reads it.
	ArgsSchema json.RawMessage `json:"args_schema,omitempty"`

	mappings string    // esbuild's source map "mappings"
	origin   lineIndex // the user's code, to clamp positions
	mapOnce  sync.Once
	lines    [][]segment
	foldOnce sync.Once
	folded   []Folded // Folded, computed on first use
	wireOnce sync.Once
	wireDAG  *wire.DAG       // WireDAG, computed on first use
	wireJSON json.RawMessage // its encoding
}

// DAG is the tool calls of a snippet, their data dependencies, the order
// between calls on the same resource and the decisions that select calls.
type DAG struct {
	Tasks []Task `json:"tasks"`
	// Decisions are the StaticStructure's decision nodes that hold a task,
	// in the same order and with the same ids; absent when there are none.
	Decisions []Decision `json:"decisions,omitempty"`
}

// Decision is a branch point of the code and what runs under each branch.
type Decision struct {
	ID        string   `json:"id"`   // the StaticStructure node id, "d1", ...
	Kind      string   `json:"kind"` // if, switch, ternary, and, or, nullish
	Condition string   `json:"condition,omitempty"`
	DependsOn []string `json:"depends_on"` // tasks whose results the condition reads; never nil
	Branches  []Branch `json:"branches"`
}

// Branch is one outcome of a decision: the tasks and nested decisions
// directly under it, seen through loops and Promise.all (which are not
// decisions).
type Branch struct {
	Label string   `json:"label"` // true, false, nullish, a case expression or default
	Nodes []string `json:"nodes"` // task ids "tN" and decision ids "dN"
}

// Task is one tool call site.
type Task struct {
	ID        string   `json:"id"`         // "t1", "t2", ... in evaluation order
	Tool      string   `json:"tool"`       // "ns:action"
	DependsOn []string `json:"depends_on"` // never nil
	Layer     int      `json:"layer"`      // longest dependency path from a task with none
	// After lists earlier tasks that name the same literal resource (see
	// the package documentation): an order, not a data dependency. It does
	// not change Layer.
	After []string `json:"after,omitempty"`
	// Loops are the StaticStructure ids of the loops around the call site,
	// outermost first: the site runs once per iteration. Absent when none.
	Loops []string `json:"loops,omitempty"`
}

// StaticStructure is the control flow around the tool calls (see the package
// documentation for node and edge types).
type StaticStructure struct {
	Nodes []Node `json:"nodes"`
	Edges []Edge `json:"edges"`
}

// Node is one node of the StaticStructure.
type Node struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"` // task, decision, loop, fork, join, capability
	Tool      string          `json:"tool,omitempty"`
	Args      json.RawMessage `json:"args,omitempty"`
	Kind      string          `json:"kind,omitempty"`
	Condition string          `json:"condition,omitempty"`
}

// Edge is one edge of the StaticStructure.
type Edge struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Type  string `json:"type"` // sequence, conditional, loop_body, fork, join
	Label string `json:"label,omitempty"`
}

// Node and edge types.
const (
	NodeTask       = "task"
	NodeDecision   = "decision"
	NodeLoop       = "loop"
	NodeFork       = "fork"
	NodeJoin       = "join"
	NodeCapability = "capability"

	EdgeSequence    = "sequence"
	EdgeConditional = "conditional"
	EdgeLoopBody    = "loop_body"
	EdgeFork        = "fork"
	EdgeJoin        = "join"
)

// Analyze analyses code without a cache. Errors are *pmlerr.Error with code
// EMPTY_CODE, CODE_TOO_LARGE or SYNTAX_ERROR (Details "line" and "column",
// ints, in the user's code).
func Analyze(code string) (*Analysis, error) {
	sum := sha256.Sum256([]byte(code))
	return analyze(code, sum)
}

func analyze(code string, sum [32]byte) (*Analysis, error) {
	st, err := strip(code)
	if err != nil {
		return nil, err
	}
	a := &Analysis{
		CodeHash: hex.EncodeToString(sum[:]),
		JS:       st.js,
		mappings: st.mappings,
		origin:   st.origin,
	}
	if err := a.build(st); err != nil {
		if _, ok := pmlerr.As(err); !ok {
			err = pmlerr.Wrap(pmlerr.Internal, err)
		}
		return nil, err
	}
	return a, nil
}
