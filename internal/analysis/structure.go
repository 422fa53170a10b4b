package analysis

import (
	"slices"
	"strconv"
	"strings"

	"github.com/tdewolff/parse/v2/js"
)

// container is a control node (decision, loop, fork) and what runs inside it,
// in creation order. The root container is the snippet itself.
type container struct {
	typ, kind string
	// cond renders the condition or loop header: its parts joined by sep.
	// It is printed only for containers that are emitted.
	cond     []js.IExpr
	sep      string
	deps     symset // what the condition or header reads
	children []child
	id       string
	hasTask  bool
}

// child is a task (c == nil) or a nested container, under a branch label.
type child struct {
	label string
	task  int
	c     *container
}

// open creates a control node under the current one.
func (b *builder) open(typ, kind string, deps symset, sep string, cond ...js.IExpr) *container {
	c := &container{typ: typ, kind: kind, cond: cond, sep: sep, deps: deps}
	b.cur.children = append(b.cur.children, child{label: b.label, c: c})
	return c
}

// within runs fn with c as the current container, new nodes under label, and
// ctrl added to the conditions the code runs under.
func (b *builder) within(c *container, label string, ctrl symset, fn func()) {
	prevCur, prevLabel := b.cur, b.label
	b.cur, b.label = c, label
	b.ctrl = append(b.ctrl, ctrl)
	b.enterRegion()
	fn()
	b.exitRegion()
	b.ctrl = b.ctrl[:len(b.ctrl)-1]
	b.cur, b.label = prevCur, prevLabel
}

// markTasks records which containers hold a task, so empty ones are left out.
func markTasks(c *container) bool {
	for _, ch := range c.children {
		if ch.c == nil || markTasks(ch.c) {
			c.hasTask = true
		}
	}
	return c.hasTask
}

// emitter writes the StaticStructure from the container tree.
type emitter struct {
	b       *builder
	res     *resolver
	deps    [][]int // final task dependencies, sorted
	layers  []int
	nodes   []Node
	edges   []Edge
	counter map[string]int
	// decisions are the DAG's decisions, in the order of their nodes.
	decisions []Decision
	// loops is the stack of loop ids around the node being emitted; a
	// task's copy is in taskLoops.
	loops     []string
	taskLoops map[int][]string
}

var idPrefix = map[string]string{NodeDecision: "d", NodeLoop: "l", NodeFork: "f"}

func (e *emitter) emit(c *container) {
	for _, ch := range c.children {
		var id string
		switch {
		case ch.c == nil:
			id = e.b.tasks[ch.task].id
			e.task(ch.task)
		case ch.c.hasTask:
			id = e.container(ch.c)
		default:
			continue
		}
		e.link(c, id, ch.label)
	}
	if c.typ == NodeFork {
		join := "j" + c.id[1:]
		e.nodes = append(e.nodes, Node{ID: join, Type: NodeJoin, Kind: c.kind})
		for _, ch := range c.children {
			if ch.c == nil {
				e.edges = append(e.edges, Edge{From: e.b.tasks[ch.task].id, To: join, Type: EdgeJoin})
			} else if ch.c.hasTask {
				e.edges = append(e.edges, Edge{From: ch.c.id, To: join, Type: EdgeJoin})
			}
		}
	}
}

func (e *emitter) task(i int) {
	t := e.b.tasks[i]
	e.nodes = append(e.nodes, Node{ID: t.id, Type: NodeTask, Tool: t.tool, Args: t.args})
	if len(e.loops) > 0 {
		e.taskLoops[i] = slices.Clone(e.loops)
	}
	for _, d := range e.deps[i] {
		e.edges = append(e.edges, Edge{From: e.b.tasks[d].id, To: t.id, Type: EdgeSequence})
	}
}

func (e *emitter) container(c *container) string {
	e.counter[c.typ]++
	c.id = idPrefix[c.typ] + strconv.Itoa(e.counter[c.typ])
	parts := make([]string, len(c.cond))
	for i, x := range c.cond {
		parts[i] = exprText(x)
	}
	cond := strings.Join(parts, c.sep)
	e.nodes = append(e.nodes, Node{ID: c.id, Type: c.typ, Kind: c.kind, Condition: cond})
	deps := reduceDeps(e.res.set(c.deps), e.deps, e.layers)
	for _, d := range deps {
		e.edges = append(e.edges, Edge{From: e.b.tasks[d].id, To: c.id, Type: EdgeSequence})
	}
	di := -1
	if c.typ == NodeDecision {
		di = len(e.decisions)
		e.decisions = append(e.decisions, Decision{ID: c.id, Kind: c.kind, Condition: cond, DependsOn: e.b.taskIDs(deps)})
	}
	if c.typ == NodeLoop {
		e.loops = append(e.loops, c.id)
	}
	e.emit(c)
	if c.typ == NodeLoop {
		e.loops = e.loops[:len(e.loops)-1]
	}
	if di >= 0 {
		e.decisions[di].Branches = e.branches(c)
	}
	return c.id
}

// branches lists, per branch label in order of appearance, the tasks and
// decisions directly under decision c, through loops and forks. It runs
// after c's children are emitted, when their ids are known.
func (e *emitter) branches(c *container) []Branch {
	out := []Branch{}
	var add func(label string, ch child)
	add = func(label string, ch child) {
		var id string
		switch {
		case ch.c == nil:
			id = e.b.tasks[ch.task].id
		case !ch.c.hasTask:
			return
		case ch.c.typ == NodeDecision:
			id = ch.c.id
		default:
			for _, g := range ch.c.children {
				add(label, g)
			}
			return
		}
		i := slices.IndexFunc(out, func(b Branch) bool { return b.Label == label })
		if i < 0 {
			i = len(out)
			out = append(out, Branch{Label: label, Nodes: []string{}})
		}
		out[i].Nodes = append(out[i].Nodes, id)
	}
	for _, ch := range c.children {
		add(ch.label, ch)
	}
	return out
}

// link adds the edge from a control node to a first-level node inside it.
func (e *emitter) link(parent *container, id, label string) {
	switch parent.typ {
	case NodeDecision:
		e.edges = append(e.edges, Edge{From: parent.id, To: id, Type: EdgeConditional, Label: label})
	case NodeLoop:
		e.edges = append(e.edges, Edge{From: parent.id, To: id, Type: EdgeLoopBody})
	case NodeFork:
		e.edges = append(e.edges, Edge{From: parent.id, To: id, Type: EdgeFork})
	}
}

// maxDeps bounds the dependencies reported for one node, so that code
// built to make every call depend on every earlier one cannot produce a
// quadratic DAG.
const maxDeps = 32

// reduceDeps drops the dependencies implied by another one (those the
// highest-layer dependency also depends on) and keeps at most maxDeps, the
// highest layers first. Layers are unchanged: the highest one stays.
func reduceDeps(ds []int, deps [][]int, layers []int) []int {
	if len(ds) < 2 {
		return ds
	}
	pivot := ds[0]
	for _, d := range ds {
		if layers[d] > layers[pivot] || (layers[d] == layers[pivot] && d > pivot) {
			pivot = d
		}
	}
	implied := deps[pivot] // sorted, like ds: walk both at once
	kept := make([]int, 0, len(ds))
	j := 0
	for _, d := range ds {
		for j < len(implied) && implied[j] < d {
			j++
		}
		if d == pivot || j == len(implied) || implied[j] != d {
			kept = append(kept, d)
		}
	}
	if len(kept) > maxDeps {
		slices.SortFunc(kept, func(a, b int) int {
			if layers[a] != layers[b] {
				return layers[b] - layers[a]
			}
			return b - a
		})
		kept = kept[:maxDeps]
		slices.Sort(kept)
	}
	return kept
}

// layer resolves each task's dependencies, drops the edges that would close
// a cycle and computes longest-path layers.
func layer(raw [][]int) (deps [][]int, layers []int) {
	n := len(raw)
	deps = make([][]int, n)
	layers = make([]int, n)
	const (
		unseen = iota
		active
		done
	)
	state := make([]int, n)
	var visit func(i int)
	visit = func(i int) {
		state[i] = active
		deps[i] = make([]int, 0, len(raw[i]))
		for _, d := range raw[i] {
			if d == i || state[d] == active {
				continue // a cycle: keep the DAG acyclic
			}
			if state[d] == unseen {
				visit(d)
			}
			deps[i] = append(deps[i], d)
			layers[i] = max(layers[i], layers[d]+1)
		}
		state[i] = done
	}
	for i := range n {
		if state[i] == unseen {
			visit(i)
		}
	}
	return deps, layers
}
