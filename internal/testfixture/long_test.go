package testfixture

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Every test that calls Long runs in .ci/run's long invocation: named in
// its -run pattern, its package among the ones it tests. A long test moved
// out of the README's command must not leave CI with it (docs/testing.md
// "Long tests").
func TestLongTestsRunInCI(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	ci, err := os.ReadFile(filepath.Join(root, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^PML_LONG_TESTS=1 go test .*-run '\^\(([^)]*)\)\$' (.*)$`).FindSubmatch(ci)
	if m == nil {
		t.Fatal(".ci/run has no `PML_LONG_TESTS=1 go test … -run '^(A|B)$' PACKAGES` line")
	}
	names, pkgs := strings.Split(string(m[1]), "|"), strings.Fields(string(m[2]))
	found := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "node_modules" || n == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil || !strings.HasPrefix(fn.Name.Name, "Test") || !callsLong(fn.Body) {
				continue
			}
			found++
			rel, _ := filepath.Rel(root, filepath.Dir(path))
			if !slices.Contains(names, fn.Name.Name) {
				t.Errorf("%s (%s) calls testfixture.Long but .ci/run's long tests do not name it", fn.Name.Name, rel)
			}
			if !slices.Contains(pkgs, "./"+filepath.ToSlash(rel)) {
				t.Errorf("%s calls testfixture.Long but .ci/run's long tests do not run ./%s", fn.Name.Name, filepath.ToSlash(rel))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found == 0 {
		t.Fatal("no test calls testfixture.Long: the walk is broken")
	}
}

// callsLong reports whether body calls testfixture.Long (or Long, here).
func callsLong(body *ast.BlockStmt) bool {
	calls := false
	ast.Inspect(body, func(n ast.Node) bool {
		c, ok := n.(*ast.CallExpr)
		if !ok {
			return !calls
		}
		switch f := c.Fun.(type) {
		case *ast.SelectorExpr:
			if x, ok := f.X.(*ast.Ident); ok && x.Name == "testfixture" && f.Sel.Name == "Long" {
				calls = true
			}
		case *ast.Ident:
			if f.Name == "Long" {
				calls = true
			}
		}
		return !calls
	})
	return calls
}
