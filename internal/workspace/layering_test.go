package workspace

import (
	"go/ast"
	"go/parser"
	gotoken "go/token"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// maxGatewayNames bounds the names of package gateway the workspace's code
// uses: it reaches the gateway through its client adapter
// (internal/gatewayclient) and, in local mode, by opening the gateway
// in-process (docs/architecture.md "internal/workspace — the package");
// what both serve over HTTP is internal/httpserve's (issue 41, item 9).
// Tests may set up a gateway as they need.
const maxGatewayNames = 6

func TestWorkspaceReachesFewGatewayNames(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	names := map[string][]string{}
	fset := gotoken.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		local := ""
		for _, imp := range f.Imports {
			if path, _ := strconv.Unquote(imp.Path.Value); path == "github.com/pml-go/pml/internal/gateway" {
				local = "gateway"
				if imp.Name != nil {
					local = imp.Name.Name
				}
			}
		}
		if local == "" {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == local {
					names[sel.Sel.Name] = append(names[sel.Sel.Name], fset.Position(sel.Pos()).String())
				}
			}
			return true
		})
	}
	if len(names) > maxGatewayNames {
		var lines []string
		for _, n := range slices.Sorted(maps.Keys(names)) {
			lines = append(lines, "gateway."+n+" at "+names[n][0])
		}
		t.Fatalf("the workspace uses %d names of package gateway, at most %d:\n%s", len(names), maxGatewayNames, strings.Join(lines, "\n"))
	}
}
