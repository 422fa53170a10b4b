package local

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/pmlerr"
)

// matchPath runs g over a slash-separated path the way the walk does.
func matchPath(g glob, rel string) bool {
	st := g.start()
	for _, part := range strings.Split(rel, "/") {
		st = g.step(st, part)
	}
	return g.matched(st)
}

func TestGlobMatch(t *testing.T) {
	cases := []struct {
		pattern, path string
		want          bool
	}{
		{"*.go", "main.go", true},
		{"*.go", "a/b/main.go", true}, // no '/': the name at any depth
		{"*.go", "a/main.txt", false},
		{"src/*.go", "src/a.go", true},
		{"src/*.go", "src/x/a.go", false},
		{"src/**/*.go", "src/a.go", true},
		{"src/**/*.go", "src/x/y/a.go", true},
		{"src/**/*.go", "lib/a.go", false},
		{"**", "a/b/c", true},
		{"a/**", "a/b/c", true},
		{"a/**", "a", true}, // ** may match nothing
		{"**/b/**/d", "a/b/c/d", true},
		{"**/b/**/d", "a/b/c/e", false},
		{"/src/*.go/", "src/a.go", true}, // leading and trailing slashes are ignored
		{"a//b", "a/b", false},           // an empty segment matches no name
		{strings.Repeat("**/", 300) + "x.go", "a/b/x.go", true},
		{strings.Repeat("**/", 300) + "x.go", "a/b/y.go", false},
		{strings.Repeat("**/a/", 15) + "z", strings.Repeat("a/", 40) + "z", true},
		{strings.Repeat("**/a/", 15) + "z", strings.Repeat("a/", 14) + "z", false},
	}
	for _, c := range cases {
		g, err := compileGlob(c.pattern)
		if err != nil {
			t.Fatalf("compileGlob(%q): %v", c.pattern, err)
		}
		if got := matchPath(g, c.path); got != c.want {
			t.Errorf("match(%.40q, %q) = %v, want %v", c.pattern, c.path, got, c.want)
		}
	}
}

func TestGlobLimits(t *testing.T) {
	for pattern, want := range map[string]string{
		"[a":                                   "syntax error",
		"ok/[a/x":                              "syntax error",
		strings.Repeat("a/", 33) + "b":         "has 34 segments",
		strings.Repeat("x", maxGlobBytes+1):    "is 1025 bytes; at most 1024",
		strings.Repeat("**/a/", 17) + "b":      "has 35 segments (runs of ** count once); at most 32",
		strings.Repeat("**/", 300) + "nothing": "", // runs of ** collapse, so it fits
		strings.Repeat("a/", 31) + "b":         "",
	} {
		_, err := compileGlob(pattern)
		switch {
		case want == "" && err != nil:
			t.Errorf("compileGlob(%.30q...): %v", pattern, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("compileGlob(%.30q...) = %v, want an error containing %q", pattern, err, want)
		}
	}
}

// deepTree makes depth nested directories "d" under root, each holding a
// file f.txt, and returns the deepest directory's path relative to root.
func deepTree(t *testing.T, root string, depth int) string {
	t.Helper()
	rel := strings.TrimSuffix(strings.Repeat("d/", depth), "/")
	// MkdirAll with a long path would pass PATH_MAX; go down level by level.
	dir, err := os.OpenRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	cur := "."
	for range depth {
		cur = filepath.Join(cur, "d")
		if err := dir.Mkdir(cur, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := dir.WriteFile(filepath.Join(cur, "f.txt"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return rel
}

// A pattern of 300 "**/" segments before a tail that matches nothing, over
// a tree 300 levels deep: the recursive matcher this replaced never finished.
func TestSearchFilesHostilePattern(t *testing.T) {
	f := newFixture(t)
	deepest := deepTree(t, f.ws, 300)
	writeFile(t, filepath.Join(f.ws, "x.go"), "")

	done := make(chan struct{})
	var got []string
	go func() {
		defer close(done)
		f.ok(t, "filesystem:search_files", map[string]any{"pattern": strings.Repeat("**/", 300) + "nothing"}, &got)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second): // generous: the walk takes milliseconds
		t.Fatal("hostile pattern still running after 30 s")
	}
	if len(got) != 0 {
		t.Fatalf("matched %v", got)
	}
	// The same prefix with a tail that does match finds exactly that file,
	// at every depth.
	f.ok(t, "filesystem:search_files", map[string]any{"pattern": strings.Repeat("**/", 300) + "f.txt", "max_results": 1000}, &got)
	if len(got) != 300 || !slices.Contains(got, deepest+"/f.txt") {
		t.Fatalf("found %d files (deepest %v), want 300", len(got), slices.Contains(got, deepest+"/f.txt"))
	}
	// Too many segments (after collapsing **) is a clear error, and the
	// tool keeps serving.
	f.fails(t, "filesystem:search_files", map[string]any{"pattern": strings.Repeat("**/d/", 40) + "f.txt"}, pmlerr.ToolError, "at most 32")
	f.fails(t, "filesystem:search_files", map[string]any{"pattern": strings.Repeat("x", 5000)}, pmlerr.ToolError, "at most 1024")
	f.ok(t, "filesystem:search_files", map[string]any{"pattern": "x.go"}, &got)
	if !slices.Equal(got, []string{"x.go"}) {
		t.Fatalf("after rejected patterns: %v", got)
	}
}

// Only directories some path below which can still match are read.
func TestSearchFilesPrunes(t *testing.T) {
	f := newFixture(t)
	writeFile(t, filepath.Join(f.ws, "src", "a", "x.ts"), "")
	for _, d := range []string{"node_modules/p/q", "vendor/r"} {
		writeFile(t, filepath.Join(f.ws, d, "y.ts"), "")
	}
	r, err := os.OpenRoot(f.ws)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	fsys := &countingFS{FS: r.FS()}
	g, err := compileGlob("src/**/*.ts")
	if err != nil {
		t.Fatal(err)
	}
	got, err := searchTree(t.Context(), fsys, ".", g, 100, maxSearchEntries)
	if err != nil || !slices.Equal(got, []string{"src/a/x.ts"}) {
		t.Fatalf("searchTree = %v, %v", got, err)
	}
	if want := []string{".", "src", "src/a"}; !slices.Equal(fsys.opened(), want) {
		t.Errorf("read directories %v, want only %v", fsys.opened(), want)
	}
}

func TestSearchFilesEntryCap(t *testing.T) {
	f := newFixture(t)
	deepTree(t, f.ws, 50) // 100 entries
	r, err := os.OpenRoot(f.ws)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	g, _ := compileGlob("nothing")
	if _, err := searchTree(t.Context(), r.FS(), ".", g, 100, 60); err == nil || !strings.Contains(err.Error(), "too many entries: 60 without finishing") {
		t.Fatalf("over the entry cap: %v", err)
	}
	if got, err := searchTree(t.Context(), r.FS(), ".", g, 100, 100); err != nil || len(got) != 0 {
		t.Fatalf("at the entry cap: %v, %v", got, err)
	}
}

// Cancelling the call's context stops the walk at the next entry.
func TestSearchFilesCancel(t *testing.T) {
	f := newFixture(t)
	deepTree(t, f.ws, 100)
	r, err := os.OpenRoot(f.ws)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithCancel(t.Context())
	fsys := &countingFS{FS: r.FS(), after: 10, hook: cancel}
	g, _ := compileGlob("**/nothing")
	_, err = searchTree(ctx, fsys, ".", g, 100, maxSearchEntries)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("searchTree after cancel: %v", err)
	}
	if n := len(fsys.opened()); n != 10 {
		t.Errorf("read %d directories; the walk should stop at the first entry after the 10th", n)
	}
	// Through the tool: a cancelled call returns the context's error.
	_, err = f.p.Call(ctx, "filesystem:search_files", mustJSON(t, map[string]any{"pattern": "*"}))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("tool call with a cancelled context: %v", err)
	}
}

// countingFS records the directories a walk opens over a real directory,
// and runs hook once, right after the after-th open.
type countingFS struct {
	fs.FS
	after int
	hook  func()
	dirs  []string
}

func (c *countingFS) Open(name string) (fs.File, error) {
	c.dirs = append(c.dirs, name)
	if c.hook != nil && len(c.dirs) == c.after {
		c.hook()
	}
	return c.FS.Open(name)
}

func (c *countingFS) opened() []string { return c.dirs }
