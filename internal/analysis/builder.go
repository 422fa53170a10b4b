package analysis

import (
	"encoding/json"
	"strconv"

	"github.com/tdewolff/parse/v2/js"
)

// mcpLevel says how much of a tool reference a value is.
type mcpLevel uint8

const (
	mcpNone mcpLevel = iota
	mcpRoot          // mcp itself
	mcpNS            // mcp.ns
	mcpTool          // mcp.ns.action
)

// val is what the walk knows about the value of an expression.
type val struct {
	taint symset
	ref   string // the value is exactly this path of a task result: "t1", "t1.items[0]"
	elems []val  // per-element values of an array literal or Promise.all

	mcp        mcpLevel
	ns, action string

	global bool // globalThis, this, self...: reading .mcp on it is mcp

	args bool     // the value is `args` or a path into it
	path []string // that path
	// typeofArgs: the value is `typeof <args path>`.
	typeofArgs bool

	fn *funcInfo // a function the snippet defines
}

func (v val) isArgsPath() bool { return v.args && len(v.path) > 0 }

// task is one tool call site.
type task struct {
	id   string
	tool string
	args json.RawMessage
	deps symset
	sym  sym
}

// builder walks the wrapper function's body once, in evaluation order.
type builder struct {
	argsVar *js.Var

	syms     []symDef
	tasks    []*task
	callTask map[*js.CallExpr]int
	vars     map[*js.Var]val
	funcs    map[js.INode]*funcInfo

	tools    []string
	toolSeen map[string]bool
	dynamic  bool
	imports  bool // import() or import.meta: refused

	ctrl    []symset          // conditions the current code runs under
	regions []map[*js.Var]val // per open region, variables' values before it set them
	fn      *funcInfo         // the function whose returns are being collected
	root    *container
	cur     *container
	label   string // branch label of cur that new nodes go under

	schema *argNode
	// argsRefs counts the references to args, argsReads those that only
	// read one of its properties by name: more references than reads
	// means the code uses args as a whole (JSON.stringify(args), args[k]),
	// so its schema stays open to any field.
	argsRefs, argsReads int
}

func newBuilder(argsVar *js.Var) *builder {
	root := &container{typ: "root"}
	return &builder{
		argsVar:  argsVar,
		callTask: map[*js.CallExpr]int{},
		vars:     make(map[*js.Var]val, 32),
		funcs:    map[js.INode]*funcInfo{},
		toolSeen: map[string]bool{},
		root:     root,
		cur:      root,
	}
}

func (b *builder) newSym(d symDef) sym {
	b.syms = append(b.syms, d)
	return sym(len(b.syms) - 1)
}

func (b *builder) useTool(id string) {
	if !b.toolSeen[id] {
		b.toolSeen[id] = true
		b.tools = append(b.tools, id)
	}
}

func (b *builder) ctrlTaint() symset {
	var s symset
	for _, c := range b.ctrl {
		s = s.union(c)
	}
	return s
}

// newTask records a tool call site and returns the value of its result.
func (b *builder) newTask(tool string, args json.RawMessage, deps symset) val {
	i := len(b.tasks)
	t := &task{id: "t" + strconv.Itoa(i+1), tool: tool, args: args, deps: deps}
	t.sym = b.newSym(symDef{kind: symTask, task: i})
	b.tasks = append(b.tasks, t)
	b.cur.children = append(b.cur.children, child{label: b.label, task: i, c: nil})
	return val{taint: symset{t.sym}, ref: t.id}
}

// escape notes that v is used as a plain value: mcp or a namespace flowing
// anywhere is a dynamic access, and `args` as a whole is read.
func (b *builder) escape(v val) {
	if v.mcp == mcpRoot || v.mcp == mcpNS || v.global {
		b.dynamic = true
	}
	if v.args && len(v.path) == 0 {
		b.argNode(nil) // used beyond what we can list: the schema stays open
	}
}

// canon returns the declaration a use of a variable refers to.
func canon(v *js.Var) *js.Var {
	for v.Link != nil {
		v = v.Link
	}
	return v
}

// funcFor returns the funcInfo of a function node, creating its syms.
func (b *builder) funcFor(n js.INode, params js.Params) *funcInfo {
	if f, ok := b.funcs[n]; ok {
		return f
	}
	f := &funcInfo{rest: params.Rest != nil}
	count := len(params.List)
	if f.rest {
		count++
	}
	for i := range count {
		f.params = append(f.params, b.newSym(symDef{kind: symParam, fn: f, param: i}))
	}
	f.ret = b.newSym(symDef{kind: symReturn, fn: f})
	f.ctrl = b.newSym(symDef{kind: symCtrl, fn: f})
	b.funcs[n] = f
	return f
}
