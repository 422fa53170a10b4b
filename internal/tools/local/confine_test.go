package local

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/pml-go/pml/internal/pmlerr"
)

// everyPathTool lists each tool with the arguments that aim it at p.
func everyPathTool(p string) map[string]map[string]any {
	return map[string]map[string]any{
		"filesystem:read_file":      {"path": p},
		"filesystem:write_file":     {"path": p, "content": "pwned"},
		"filesystem:list_directory": {"path": p},
		"filesystem:stat":           {"path": p},
		"filesystem:make_directory": {"path": p},
		"filesystem:move_file":      {"source": p, "destination": "moved"},
		"filesystem:search_files":   {"path": p, "pattern": "*"},
		"shell:exec":                {"command": "true", "cwd": p},
	}
}

func TestRefusedPaths(t *testing.T) {
	f := newFixture(t)
	symlink(t, f.outside, filepath.Join(f.ws, "out_dir"))                               // absolute link to a directory outside
	symlink(t, filepath.Join(f.outside, "secret.txt"), filepath.Join(f.ws, "out_file")) // link to a file outside
	symlink(t, "../outside", filepath.Join(f.ws, "rel_out"))                            // relative link climbing out
	symlink(t, filepath.Join(f.outside, "new.txt"), filepath.Join(f.ws, "dangling"))    // dangling link to outside
	mkdir(t, filepath.Join(f.ws, "sub"))
	symlink(t, "../../outside/secret.txt", filepath.Join(f.ws, "sub", "deep")) // relative, from a subdirectory
	symlink(t, filepath.Join(f.ws, "hop2"), filepath.Join(f.ws, "hop1"))       // a chain: inside, then outside
	symlink(t, f.outside, filepath.Join(f.ws, "hop2"))

	cases := []struct {
		name, path, reason string
	}{
		{"absolute outside", filepath.Join(f.outside, "secret.txt"), "absolute path outside the workspace"},
		{"absolute root", "/", "absolute path outside the workspace"},
		{"dot-dot", "../outside/secret.txt", "'..' climbs out"},
		{"dot-dot after a directory", "sub/../../outside/secret.txt", "'..' climbs out"},
		{"absolute with dot-dot", f.ws + "/../outside/secret.txt", "'..' climbs out"},
		{"symlinked directory", "out_dir/secret.txt", "symlink"},
		{"symlinked directory itself", "out_dir", "symlink"},
		{"symlinked file", "out_file", "symlink"},
		{"relative symlink", "rel_out/secret.txt", "symlink"},
		{"symlink in a subdirectory", "sub/deep", "symlink"},
		{"symlink chain", "hop1/secret.txt", "symlink"},
		{"new file under an outside symlink", "out_dir/new/file.txt", "symlink"},
		{"dangling symlink to outside", "dangling", "symlink"},
		{"NUL byte", "sub/a\x00b", "NUL byte"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for tool, args := range everyPathTool(c.path) {
				f.fails(t, tool, args, pmlerr.PermissionDenied, c.reason)
			}
			// The other side of move_file is checked too.
			f.fails(t, "filesystem:move_file", map[string]any{"source": "sub", "destination": c.path},
				pmlerr.PermissionDenied, c.reason)
		})
	}
	// Nothing leaked out: no write landed outside, the secret is intact.
	for _, p := range []string{"new.txt", "new", "moved"} {
		if exists(filepath.Join(f.outside, p)) {
			t.Errorf("%s was created outside the workspace", p)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(f.outside, "secret.txt")); string(b) != "top secret" {
		t.Errorf("secret changed to %q", b)
	}
	if !exists(filepath.Join(f.ws, "sub")) {
		t.Error("sub was moved")
	}
}

func TestPermissionDeniedNamesThePath(t *testing.T) {
	f := newFixture(t)
	res, err := f.call(t, "filesystem:read_file", map[string]any{"path": "../x"})
	pe, ok := pmlerr.As(err)
	if !ok || pe.Details["path"] != "../x" {
		t.Fatalf("read_file(../x) = %s, %v; want PERMISSION_DENIED with details.path", res, err)
	}
}

func TestAllowedPaths(t *testing.T) {
	f := newFixture(t)
	writeFile(t, filepath.Join(f.ws, "docs", "a.txt"), "A")
	symlink(t, "docs/a.txt", filepath.Join(f.ws, "alias"))             // inside → inside
	symlink(t, f.ws+"/docs", filepath.Join(f.ws, "docs_abs"))          // absolute, inside
	symlink(t, "docs/new.txt", filepath.Join(f.ws, "dangling_inside")) // dangling, inside

	for _, p := range []string{"docs/a.txt", "./docs/a.txt", "docs/../docs/a.txt", f.ws + "/docs/a.txt", "alias", "docs_abs/a.txt"} {
		var got string
		f.ok(t, "filesystem:read_file", map[string]any{"path": p}, &got)
		if got != "A" {
			t.Errorf("read_file(%s) = %q", p, got)
		}
	}
	// A dangling link inside the workspace is written through, like the shell would.
	f.ok(t, "filesystem:write_file", map[string]any{"path": "dangling_inside", "content": "N"}, nil)
	if b, _ := os.ReadFile(filepath.Join(f.ws, "docs", "new.txt")); string(b) != "N" {
		t.Errorf("write through dangling link wrote %q", b)
	}
	// The workspace root itself, by every spelling.
	for _, p := range []string{"", ".", f.ws, f.ws + "/"} {
		f.ok(t, "filesystem:list_directory", map[string]any{"path": p}, nil)
	}
}

func TestWorkspaceGivenThroughASymlink(t *testing.T) {
	f := newFixture(t)
	writeFile(t, filepath.Join(f.ws, "a.txt"), "A")
	link := filepath.Join(filepath.Dir(f.ws), "ws_link")
	symlink(t, f.ws, link)
	p := New(link)
	g := fixture{ws: f.ws, outside: f.outside, p: p}
	// Absolute paths are accepted in the configured spelling and the resolved one.
	for _, path := range []string{"a.txt", link + "/a.txt", f.ws + "/a.txt"} {
		var got string
		g.ok(t, "filesystem:read_file", map[string]any{"path": path}, &got)
		if got != "A" {
			t.Errorf("read_file(%s) = %q", path, got)
		}
	}
	g.fails(t, "filesystem:read_file", map[string]any{"path": link + "/../outside/secret.txt"}, pmlerr.PermissionDenied, "'..'")
}

func TestSymlinkLoop(t *testing.T) {
	f := newFixture(t)
	symlink(t, "loop_b", filepath.Join(f.ws, "loop_a"))
	symlink(t, "loop_a", filepath.Join(f.ws, "loop_b"))
	f.fails(t, "filesystem:read_file", map[string]any{"path": "loop_a"}, pmlerr.ToolError, "too many levels of symbolic links")
}

func TestMissingWorkspace(t *testing.T) {
	p := New(filepath.Join(t.TempDir(), "nope"))
	f := fixture{p: p}
	f.fails(t, "filesystem:list_directory", map[string]any{"path": "."}, pmlerr.ToolError, "not accessible")
}
