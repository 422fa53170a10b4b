package engine

import (
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	lib "modernc.org/libquickjs"
)

// evalText evaluates src as a global script and returns its value as a
// string ("" for undefined).
func evalText(vm *VM, src string) (string, error) {
	code, ok := vm.Compile(src, false)
	if !ok {
		return "", fmt.Errorf("compile: %s", vm.TakeException(1<<10).Message)
	}
	v := vm.EvalBytecode(code)
	if v.IsException() {
		return "", fmt.Errorf("%s", vm.TakeException(1<<10).Message)
	}
	defer vm.Free(v)
	if int32(v.v.Ftag) == lib.EJS_TAG_UNDEFINED {
		return "", nil
	}
	s, _ := vm.GoString(v)
	return s, nil
}

func newVM(t testing.TB) *VM {
	t.Helper()
	vm, err := New(64 << 20)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(vm.Close)
	return vm
}

// TestEngineInternals checks what this package reads of the engine's
// private layout (see the package doc) against the pinned version.
func TestEngineInternals(t *testing.T) {
	vm := newVM(t)
	if vm.MemoryBytes() <= 0 || vm.OutOfMemory() {
		t.Fatalf("fresh VM: %d bytes, out of memory %v", vm.MemoryBytes(), vm.OutOfMemory())
	}
	vm.SetMemoryLimit(vm.MemoryBytes() + 1<<20)
	if _, err := evalText(vm, "try { 'x'.repeat(4 << 20) } catch (e) {}"); err != nil {
		t.Fatal(err)
	}
	if !vm.OutOfMemory() {
		t.Error("a failed allocation did not set the flag")
	}

	// The reserve for the engine's own "out of memory" error reads the
	// runtime's in_out_of_memory bit: without it the code catches null.
	got, err := evalText(vm, "let r; try { 'x'.repeat(8 << 20) } catch (e) { r = String(e instanceof InternalError) + ' ' + e.message } r")
	if err != nil || got != "true out of memory" {
		t.Errorf("caught out-of-memory: %q, %v; want an InternalError", got, err)
	}

	// Stripped bytecode (strip_flags) has no positions.
	code, ok := vm.Compile("(function f() { throw new Error('x') })", true)
	if !ok {
		t.Fatal("compile")
	}
	f := vm.EvalBytecode(code)
	r := vm.Call(f)
	if !r.IsException() || strings.Contains(vm.TakeException(1<<10).Stack, ":1:") {
		t.Error("stripped code still has positions")
	}
	vm.Free(f)

	// interrupt_counter is what the engine counts calls and backward jumps
	// down with, polling the interrupt handler at zero (EnterJS).
	counter := &(*lib.TJSContext)(cPointer(vm.ctx)).Finterrupt_counter
	*counter = 500
	if _, err := evalText(vm, "for (let i = 0; i < 100; i++) {}"); err != nil {
		t.Fatal(err)
	}
	if n := *counter; n > 400 || n <= 0 {
		t.Errorf("a loop of 100 iterations brought interrupt_counter from 500 to %d", n)
	}

	// Every field this package reads was checked above against this
	// version; a new one must be checked again before this pin moves.
	const pinned = "v0.14.0"
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "modernc.org/libquickjs" && d.Version != pinned {
				t.Errorf("modernc.org/libquickjs is %s; the engine internals were checked against %s", d.Version, pinned)
			}
		}
	}
}

// TestOnlyTheEngineTouchesItsInternals fails when any other package of the
// module imports the engine, its C library or unsafe: what depends on the
// engine's layout stays behind this package's API.
func TestOnlyTheEngineTouchesItsInternals(t *testing.T) {
	forbidden := map[string]bool{"modernc.org/libquickjs": true, "modernc.org/libc": true, "modernc.org/quickjs": true, "unsafe": true}
	// Windows system calls take pointers to their structures (a Job
	// Object's limits, a thread snapshot's entry), and a raw read, write
	// or stat its buffer's: unsafe there is the system's API, not the engine's
	// layout (issue 41, item 1; rawio.File, rawio.Stater).
	unsafeAllowed := map[string]bool{
		filepath.FromSlash("internal/proctree/proctree_windows.go"): true,
		filepath.FromSlash("internal/rawio/raw_linux.go"):           true,
		filepath.FromSlash("internal/rawio/stat_linux.go"):          true,
	}
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	self, _ := filepath.Abs(".")
	checked := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || filepath.Dir(path) == self {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		checked++
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); forbidden[p] {
				rel, _ := filepath.Rel(root, path)
				if p == "unsafe" && unsafeAllowed[rel] {
					continue
				}
				t.Errorf("%s imports %s: only internal/sandbox/engine may", rel, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("checked only %d files under %s", checked, root)
	}
}
