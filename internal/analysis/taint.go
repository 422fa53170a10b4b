package analysis

import "slices"

// sym is something a value can derive from: a task's result, or a
// placeholder resolved once the whole snippet is walked (a local function's
// parameter, return value or calling context), so that a function may be
// declared, and even called, before the calls that feed it are seen.
type sym int32

type symKind uint8

const (
	symTask   symKind = iota // the result of tasks[task]
	symParam                 // parameter param of fn: what its call sites pass
	symReturn                // what fn returns
	symCtrl                  // the conditions under which fn is called
)

type symDef struct {
	kind  symKind
	task  int
	fn    *funcInfo
	param int
}

// symset is a sorted set of syms. A symset is never modified in place once
// built, so values may share it.
type symset []sym

func (s symset) union(t symset) symset {
	switch {
	case len(t) == 0:
		return s
	case len(s) == 0:
		return t
	}
	out := make(symset, 0, len(s)+len(t))
	i, j := 0, 0
	for i < len(s) && j < len(t) {
		switch {
		case s[i] < t[j]:
			out = append(out, s[i])
			i++
		case s[i] > t[j]:
			out = append(out, t[j])
			j++
		default:
			out = append(out, s[i])
			i, j = i+1, j+1
		}
	}
	out = append(out, s[i:]...)
	return append(out, t[j:]...)
}

// funcInfo is a function the snippet defines.
type funcInfo struct {
	params  []sym
	rest    bool // the last param collects the remaining arguments
	ret     sym
	ctrl    sym
	returns symset // what its return statements (or arrow body) yield
	calls   []callSite
	walked  bool
}

// callSite is one call of a local function.
type callSite struct {
	args   []symset
	spread symset // arguments spread (...xs): may land in any parameter
	ctrl   symset
}

// resolver turns symsets into the task indices they finally stand for.
type resolver struct {
	defs []symDef
	memo map[sym][]int
	busy map[sym]bool
}

func newResolver(defs []symDef) *resolver {
	return &resolver{defs: defs, memo: map[sym][]int{}, busy: map[sym]bool{}}
}

func (r *resolver) set(s symset) []int {
	if len(s) == 1 {
		return r.sym(s[0])
	}
	out := make([]int, 0, len(s))
	for _, x := range s {
		if d := r.defs[x]; d.kind == symTask {
			out = append(out, d.task)
		} else {
			out = append(out, r.sym(x)...)
		}
	}
	return sortedUnique(out)
}

func (r *resolver) sym(x sym) []int {
	d := r.defs[x]
	if d.kind == symTask {
		return []int{d.task}
	}
	if got, ok := r.memo[x]; ok {
		return got
	}
	if r.busy[x] {
		return nil // recursion: the outer resolution collects the rest
	}
	r.busy[x] = true
	var out []int
	switch d.kind {
	case symParam:
		last := d.fn.rest && d.param == len(d.fn.params)-1
		for _, c := range d.fn.calls {
			out = append(out, r.set(c.spread)...)
			for i, a := range c.args {
				if i == d.param || (last && i > d.param) {
					out = append(out, r.set(a)...)
				}
			}
		}
	case symReturn:
		out = r.set(d.fn.returns)
	case symCtrl:
		for _, c := range d.fn.calls {
			out = append(out, r.set(c.ctrl)...)
		}
	}
	out = sortedUnique(out)
	delete(r.busy, x)
	r.memo[x] = out
	return out
}

// sortedUnique sorts s in place and drops duplicates.
func sortedUnique(s []int) []int {
	slices.Sort(s)
	return slices.Compact(s)
}
