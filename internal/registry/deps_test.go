package registry

import (
	"go/build"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The registry uses the sanitizer's rules (internal/sanitize) but never the
// trace pipeline: no package it builds with, however indirectly, is
// internal/tracing (docs/architecture.md "internal/sanitize").
func TestRegistryDoesNotDependOnTracing(t *testing.T) {
	const module = "github.com/pml-go/pml/"
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	forbidden := []string{module + "internal/tracing"}
	seen := map[string]bool{}
	var walk func(path string, via []string)
	walk = func(path string, via []string) {
		if seen[path] {
			return
		}
		seen[path] = true
		if slices.Contains(forbidden, path) {
			t.Errorf("internal/registry depends on %s through %s", path, strings.Join(via, " -> "))
			return
		}
		pkg, err := build.ImportDir(filepath.Join(root, strings.TrimPrefix(path, module)), 0)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, imp := range pkg.Imports {
			if strings.HasPrefix(imp, module) {
				walk(imp, append(slices.Clone(via), imp))
			}
		}
	}
	for _, p := range []string{"internal/registry"} {
		walk(module+p, []string{module + p})
	}
	if !seen[module+"internal/sanitize"] {
		t.Errorf("internal/registry no longer uses internal/sanitize: the test walks the wrong tree")
	}
}
