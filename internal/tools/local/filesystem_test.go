package local

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/pmlerr"
)

func TestWriteThenRead(t *testing.T) {
	f := newFixture(t)
	var w struct {
		Path  string `json:"path"`
		Bytes int    `json:"bytes"`
	}
	f.ok(t, "filesystem:write_file", map[string]any{"path": "a/b/c.txt", "content": "héllo"}, &w)
	if w.Path != filepath.Join(f.ws, "a/b/c.txt") || w.Bytes != 6 {
		t.Fatalf("write_file = %+v", w)
	}
	f.ok(t, "filesystem:write_file", map[string]any{"path": "a/b/c.txt", "content": "!", "append": true}, nil)
	var got string
	f.ok(t, "filesystem:read_file", map[string]any{"path": "a/b/c.txt"}, &got)
	if got != "héllo!" {
		t.Fatalf("read_file = %q", got)
	}
	f.ok(t, "filesystem:write_file", map[string]any{"path": "a/b/c.txt", "content": "new"}, nil)
	f.ok(t, "filesystem:read_file", map[string]any{"path": "a/b/c.txt"}, &got)
	if got != "new" {
		t.Fatalf("after overwrite read_file = %q", got)
	}
}

func TestBinaryContent(t *testing.T) {
	f := newFixture(t)
	bin := []byte{0xff, 0x00, 0xfe, 'x'}
	f.ok(t, "filesystem:write_file", map[string]any{"path": "b.bin", "content": base64.StdEncoding.EncodeToString(bin), "encoding": "base64"}, nil)
	f.fails(t, "filesystem:read_file", map[string]any{"path": "b.bin"}, pmlerr.ToolError, "not UTF-8")
	var got string
	f.ok(t, "filesystem:read_file", map[string]any{"path": "b.bin", "encoding": "base64"}, &got)
	if got != base64.StdEncoding.EncodeToString(bin) {
		t.Fatalf("base64 read = %q", got)
	}
	f.fails(t, "filesystem:write_file", map[string]any{"path": "c.bin", "content": "%%", "encoding": "base64"}, pmlerr.ToolError, "base64")
}

func TestReadErrors(t *testing.T) {
	f := newFixture(t, WithMaxReadSize(4))
	writeFile(t, filepath.Join(f.ws, "big.txt"), "12345")
	mkdir(t, filepath.Join(f.ws, "dir"))
	f.fails(t, "filesystem:read_file", map[string]any{"path": "big.txt"}, pmlerr.ToolError, "larger than")
	f.fails(t, "filesystem:read_file", map[string]any{"path": "dir"}, pmlerr.ToolError, "is a directory")
	f.fails(t, "filesystem:read_file", map[string]any{"path": "missing.txt"}, pmlerr.ToolError, "does not exist")
	f.fails(t, "filesystem:read_file", map[string]any{"path": "big.txt/x"}, pmlerr.ToolError, "not a directory")
	f.fails(t, "filesystem:read_file", map[string]any{}, pmlerr.ToolError, `"path"`)
	f.fails(t, "filesystem:write_file", map[string]any{"path": ".", "content": ""}, pmlerr.ToolError, "workspace directory")
}

func TestListDirectory(t *testing.T) {
	f := newFixture(t)
	writeFile(t, filepath.Join(f.ws, "b.txt"), "12345")
	mkdir(t, filepath.Join(f.ws, "a_dir"))
	symlink(t, "b.txt", filepath.Join(f.ws, "c_link"))
	var got []dirEntry
	f.ok(t, "filesystem:list_directory", map[string]any{"path": "."}, &got)
	want := []dirEntry{{"a_dir", "directory", 0}, {"b.txt", "file", 5}, {"c_link", "symlink", 5}}
	if !slices.Equal(got, want) {
		t.Fatalf("list_directory = %+v, want %+v", got, want)
	}
	var empty []dirEntry
	f.ok(t, "filesystem:list_directory", map[string]any{"path": "a_dir"}, &empty)
	if empty == nil || len(empty) != 0 {
		t.Fatalf("empty dir listing = %#v, want []", empty)
	}
	f.fails(t, "filesystem:list_directory", map[string]any{"path": "b.txt"}, pmlerr.ToolError, "b.txt")
}

func TestStat(t *testing.T) {
	f := newFixture(t)
	writeFile(t, filepath.Join(f.ws, "d", "f.txt"), "abc")
	if err := os.Chmod(filepath.Join(f.ws, "d", "f.txt"), 0o640); err != nil {
		t.Fatal(err)
	}
	symlink(t, "d/f.txt", filepath.Join(f.ws, "ln"))
	var st struct {
		Name, Path, Type, Modified, Mode string
		Size                             int64
	}
	f.ok(t, "filesystem:stat", map[string]any{"path": "d/f.txt"}, &st)
	if st.Name != "f.txt" || st.Type != "file" || st.Size != 3 || st.Mode != "0640" || st.Path != filepath.Join(f.ws, "d/f.txt") {
		t.Fatalf("stat = %+v", st)
	}
	if m, err := time.Parse(time.RFC3339, st.Modified); err != nil || time.Since(m) > time.Hour {
		t.Fatalf("modified %q: %v", st.Modified, err)
	}
	f.ok(t, "filesystem:stat", map[string]any{"path": "ln"}, &st)
	if st.Name != "ln" || st.Type != "symlink" || st.Size != 3 {
		t.Fatalf("stat(link) = %+v", st)
	}
	f.ok(t, "filesystem:stat", map[string]any{"path": "d"}, &st)
	if st.Type != "directory" {
		t.Fatalf("stat(dir) = %+v", st)
	}
	f.fails(t, "filesystem:stat", map[string]any{"path": "nope"}, pmlerr.ToolError, "does not exist")
}

func TestMakeDirectory(t *testing.T) {
	f := newFixture(t)
	var r struct {
		Path    string
		Created bool
	}
	f.ok(t, "filesystem:make_directory", map[string]any{"path": "x/y/z"}, &r)
	if !r.Created || r.Path != filepath.Join(f.ws, "x/y/z") {
		t.Fatalf("make_directory = %+v", r)
	}
	if fi, err := os.Stat(filepath.Join(f.ws, "x/y/z")); err != nil || !fi.IsDir() {
		t.Fatalf("x/y/z not created: %v", err)
	}
	f.ok(t, "filesystem:make_directory", map[string]any{"path": "x/y/z"}, &r)
	if r.Created {
		t.Fatal("second make_directory reports created")
	}
	writeFile(t, filepath.Join(f.ws, "file"), "")
	f.fails(t, "filesystem:make_directory", map[string]any{"path": "file"}, pmlerr.ToolError, "file")
}

func TestMoveFile(t *testing.T) {
	f := newFixture(t)
	writeFile(t, filepath.Join(f.ws, "a.txt"), "A")
	writeFile(t, filepath.Join(f.ws, "b.txt"), "B")
	f.ok(t, "filesystem:move_file", map[string]any{"source": "a.txt", "destination": "sub/dir/a2.txt"}, nil)
	if exists(filepath.Join(f.ws, "a.txt")) || !exists(filepath.Join(f.ws, "sub/dir/a2.txt")) {
		t.Fatal("a.txt was not moved")
	}
	f.fails(t, "filesystem:move_file", map[string]any{"source": "sub/dir/a2.txt", "destination": "b.txt"}, pmlerr.ToolError, "overwrite")
	f.ok(t, "filesystem:move_file", map[string]any{"source": "sub/dir/a2.txt", "destination": "b.txt", "overwrite": true}, nil)
	if b, _ := os.ReadFile(filepath.Join(f.ws, "b.txt")); string(b) != "A" {
		t.Fatalf("b.txt = %q after overwrite", b)
	}
	f.fails(t, "filesystem:move_file", map[string]any{"source": "b.txt", "destination": "sub", "overwrite": true}, pmlerr.ToolError, "existing directory")
	f.fails(t, "filesystem:move_file", map[string]any{"source": "nope", "destination": "x"}, pmlerr.ToolError, "does not exist")
	f.fails(t, "filesystem:move_file", map[string]any{"source": ".", "destination": "x"}, pmlerr.ToolError, "workspace directory")
	// A symlink moves as a link; its target stays.
	symlink(t, "b.txt", filepath.Join(f.ws, "ln"))
	f.ok(t, "filesystem:move_file", map[string]any{"source": "ln", "destination": "ln2"}, nil)
	if target, err := os.Readlink(filepath.Join(f.ws, "ln2")); err != nil || target != "b.txt" || !exists(filepath.Join(f.ws, "b.txt")) {
		t.Fatalf("link move: target %q, err %v", target, err)
	}
}

func TestSearchFiles(t *testing.T) {
	f := newFixture(t)
	for _, p := range []string{"main.go", "src/a.go", "src/a_test.go", "src/deep/b.go", "src/deep/c.txt", "docs/readme.md"} {
		writeFile(t, filepath.Join(f.ws, p), "")
	}
	symlink(t, f.outside, filepath.Join(f.ws, "src", "escape")) // never descended
	cases := []struct {
		path, pattern string
		max           int
		want          []string
	}{
		{".", "*.go", 0, []string{"main.go", "src/a.go", "src/a_test.go", "src/deep/b.go"}},
		{"src", "*_test.go", 0, []string{"src/a_test.go"}},
		{"src", "deep/*", 0, []string{"src/deep/b.go", "src/deep/c.txt"}},
		{".", "src/**/*.go", 0, []string{"src/a.go", "src/a_test.go", "src/deep/b.go"}},
		{".", "**/*.md", 0, []string{"docs/readme.md"}},
		{".", "deep", 0, []string{"src/deep"}},
		{".", "*.go", 2, nil},
		{".", "secret*", 0, []string{}},
	}
	for _, c := range cases {
		args := map[string]any{"path": c.path, "pattern": c.pattern}
		if c.max > 0 {
			args["max_results"] = c.max
		}
		var got []string
		f.ok(t, "filesystem:search_files", args, &got)
		if c.want == nil {
			if len(got) != c.max {
				t.Errorf("search_files(%s, %s, max %d) = %v", c.path, c.pattern, c.max, got)
			}
			continue
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("search_files(%s, %s) = %v, want %v", c.path, c.pattern, got, c.want)
		}
	}
	f.fails(t, "filesystem:search_files", map[string]any{"pattern": "[a"}, pmlerr.ToolError, "not a valid glob")
	f.fails(t, "filesystem:search_files", map[string]any{"path": "nope", "pattern": "*"}, pmlerr.ToolError, "does not exist")
	f.fails(t, "filesystem:search_files", map[string]any{"path": "main.go", "pattern": "*"}, pmlerr.ToolError, "not a directory")
	f.ok(t, "filesystem:search_files", map[string]any{"path": "src", "pattern": "a.go"}, nil)
}
