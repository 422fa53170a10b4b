package analysis

import (
	"fmt"
	"log/slog"

	"github.com/tdewolff/parse/v2"
	"github.com/tdewolff/parse/v2/js"
)

// build fills the analysis from esbuild's output.
func (a *Analysis) build(st stripped) error {
	tree, err := js.Parse(parse.NewInputString(st.fn), js.Options{})
	if err != nil {
		// esbuild accepted syntax the JS parser does not know: stay
		// conservative rather than reject valid code.
		slog.Warn("analysis: JavaScript parser rejected esbuild output; falling back to a token scan", "err", err)
		a.fallback(st)
		return nil
	}
	fd := wrapperFunc(tree)
	if fd == nil {
		line, col := a.fnPosition(st, closingBrace(st.fn))
		return syntaxError(line, col, `unexpected "}": it closes the code body; code after it would run outside it`)
	}
	b := newBuilder(canon(fd.Params.List[0].Binding.(*js.Var)))
	if err := b.walk(fd); err != nil {
		slog.Warn("analysis: walk failed; falling back to a token scan", "err", err)
		a.fallback(st)
		return nil
	}
	if b.imports {
		line, col := a.fnPosition(st, firstImport(st.fn))
		return syntaxError(line, col, "code cannot import modules (import() and import.meta are not available); "+
			"call tools with mcp.<namespace>.<action>(args)")
	}
	a.finish(b)
	return nil
}

// walk walks the body. A panic here is a bug in the walk over untrusted
// input: it must cost one analysis, not the process.
func (b *builder) walk(fd *js.FuncDecl) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("analysis walk panicked: %v", r)
		}
	}()
	b.stmts(fd.Body.List)
	return nil
}

// wrapperFunc returns the wrapper function when the output is exactly
// `(async function(args) {...});`, else nil: the user's code closed it early.
func wrapperFunc(tree *js.AST) *js.FuncDecl {
	var stmts []js.IStmt
	for _, s := range tree.List {
		if _, ok := s.(*js.Comment); !ok {
			stmts = append(stmts, s)
		}
	}
	if len(stmts) != 1 {
		return nil
	}
	es, ok := stmts[0].(*js.ExprStmt)
	if !ok {
		return nil
	}
	g, ok := es.Value.(*js.GroupExpr)
	if !ok {
		return nil
	}
	fd, ok := g.X.(*js.FuncDecl)
	if !ok || !fd.Async || fd.Generator || fd.Name != nil || len(fd.Params.List) != 1 || fd.Params.Rest != nil {
		return nil
	}
	p, ok := fd.Params.List[0].Binding.(*js.Var)
	if !ok || string(p.Data) != "args" || fd.Params.List[0].Default != nil {
		return nil
	}
	return fd
}

// fnPosition maps a byte offset of esbuild's function output to the user's
// code; a negative offset is line 1, column 1.
func (a *Analysis) fnPosition(st stripped, off int) (int, int) {
	if off < 0 {
		return 1, 1
	}
	line, col := newLineIndex(st.fn).position(off)
	return a.OriginalPosition(st.fnLine+line, col+1)
}

// finish resolves dependencies and writes the DAG, the structure, the tools
// and the args schema.
func (a *Analysis) finish(b *builder) {
	res := newResolver(b.syms)
	raw := make([][]int, len(b.tasks))
	for i, t := range b.tasks {
		for _, d := range res.set(t.deps) {
			if d != i {
				raw[i] = append(raw[i], d)
			}
		}
	}
	deps, layers := layer(raw)
	reduced := make([][]int, len(deps))
	for i, ds := range deps {
		reduced[i] = reduceDeps(ds, deps, layers)
	}
	deps = reduced
	after := orderAfter(b.tasks, deps)
	a.DAG.Tasks = make([]Task, len(b.tasks))
	for i, t := range b.tasks {
		a.DAG.Tasks[i] = Task{ID: t.id, Tool: t.tool, DependsOn: b.taskIDs(deps[i]), Layer: layers[i]}
		if len(after[i]) > 0 {
			a.DAG.Tasks[i].After = b.taskIDs(after[i])
		}
	}
	markTasks(b.root)
	e := &emitter{b: b, res: res, deps: deps, layers: layers, counter: map[string]int{}, taskLoops: map[int][]string{}}
	e.emit(b.root)
	a.DAG.Decisions = e.decisions
	for i, ls := range e.taskLoops {
		a.DAG.Tasks[i].Loops = ls
	}
	a.Structure = StaticStructure{Nodes: nonNil(e.nodes), Edges: nonNil(e.edges)}
	a.Tools = nonNil(b.tools)
	a.Dynamic = b.dynamic
	a.ArgsSchema = schemaJSON(b.schema, b.argsRefs > b.argsReads)
}

// taskIDs names tasks by their ids.
func (b *builder) taskIDs(is []int) []string {
	ids := make([]string, 0, len(is))
	for _, i := range is {
		ids = append(ids, b.tasks[i].id)
	}
	return ids
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
