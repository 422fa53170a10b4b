package analysis

import (
	"strconv"

	"github.com/tdewolff/parse/v2/js"
)

// fallback fills the analysis from tokens alone, for output the JavaScript
// parser cannot handle: tool calls written mcp.ns.action( or with string
// keys, no dependencies, and Dynamic set since nothing else can be proved.
func (a *Analysis) fallback(st stripped) {
	var toks []token
	s := newScanner(st.fn)
	for t, ok := s.next(); ok; t, ok = s.next() {
		toks = append(toks, t)
	}
	seen := map[string]bool{}
	a.Tools = []string{}
	a.DAG.Tasks = []Task{}
	a.Structure = StaticStructure{Nodes: []Node{}, Edges: []Edge{}}
	a.Dynamic = true
	for i, t := range toks {
		if t.tt != js.IdentifierToken || string(t.text) != "mcp" || (i > 0 && isMemberToken(toks[i-1].tt)) {
			continue
		}
		ns, j, ok := memberName(toks, i+1)
		if !ok {
			continue
		}
		action, k, ok := memberName(toks, j)
		if !ok {
			continue
		}
		tool := ns + ":" + action
		if !seen[tool] {
			seen[tool] = true
			a.Tools = append(a.Tools, tool)
		}
		if k < len(toks) && toks[k].tt == js.OptChainToken {
			k++
		}
		if k < len(toks) && toks[k].tt == js.OpenParenToken {
			id := "t" + strconv.Itoa(len(a.DAG.Tasks)+1)
			a.DAG.Tasks = append(a.DAG.Tasks, Task{ID: id, Tool: tool, DependsOn: []string{}})
			a.Structure.Nodes = append(a.Structure.Nodes, Node{ID: id, Type: NodeTask, Tool: tool})
		}
	}
}

func isMemberToken(tt js.TokenType) bool { return tt == js.DotToken || tt == js.OptChainToken }

// memberName reads `.name`, `?.name`, `["name"]` or `?.["name"]` at toks[i].
func memberName(toks []token, i int) (string, int, bool) {
	if i < len(toks) && toks[i].tt == js.OptChainToken && i+1 < len(toks) && toks[i+1].tt == js.OpenBracketToken {
		i++
	}
	if i+1 >= len(toks) {
		return "", i, false
	}
	switch toks[i].tt {
	case js.DotToken, js.OptChainToken:
		if js.IsIdentifierName(toks[i+1].tt) {
			return string(toks[i+1].text), i + 2, true
		}
	case js.OpenBracketToken:
		if i+2 < len(toks) && toks[i+1].tt == js.StringToken && toks[i+2].tt == js.CloseBracketToken {
			if s, ok := unquoteJS(string(toks[i+1].text)); ok {
				return s, i + 3, true
			}
		}
	}
	return "", i, false
}
