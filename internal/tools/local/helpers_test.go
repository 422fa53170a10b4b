package local

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/tools"
)

// fixture is a workspace beside an "outside" directory holding a secret.
type fixture struct {
	ws, outside string // symlinks resolved
	p           *tools.Table
}

func newFixture(t *testing.T, opts ...Option) fixture {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := fixture{ws: filepath.Join(base, "ws"), outside: filepath.Join(base, "outside")}
	mkdir(t, f.ws)
	mkdir(t, f.outside)
	writeFile(t, filepath.Join(f.outside, "secret.txt"), "top secret")
	f.p = New(f.ws, opts...)
	return f
}

func mkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	mkdir(t, filepath.Dir(path))
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (f fixture) call(t *testing.T, tool string, args map[string]any) (json.RawMessage, error) {
	t.Helper()
	return f.p.Call(context.Background(), tool, mustJSON(t, args))
}

// ok calls tool and decodes its result into out (when not nil).
func (f fixture) ok(t *testing.T, tool string, args map[string]any, out any) {
	t.Helper()
	res, err := f.call(t, tool, args)
	if err != nil {
		t.Fatalf("%s(%v): %v", tool, args, err)
	}
	if out != nil {
		if err := json.Unmarshal(res, out); err != nil {
			t.Fatalf("%s result %s: %v", tool, res, err)
		}
	}
}

// fails calls tool and checks the error's code and that its message
// contains want.
func (f fixture) fails(t *testing.T, tool string, args map[string]any, code pmlerr.Code, want string) {
	t.Helper()
	res, err := f.call(t, tool, args)
	pe, isPML := pmlerr.As(err)
	if !isPML || pe.Code != code || !strings.Contains(pe.Message, want) {
		t.Fatalf("%s(%v) = %s, %v; want %s containing %q", tool, args, res, err, code, want)
	}
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
