// Package testfixture gives tests in any package a real MCP server to talk to:
// BuildServer compiles ./mcpserver (once per source version, shared by all
// test binaries) and StartHTTPServer runs it over Streamable HTTP;
// StartGate serves, in process, a tool that waits until the test opens it;
// Workspace writes a workspace configured with such servers.
package testfixture

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/pml-go/pml/internal/filelock"
)

// BuildServer returns the path of the fixture MCP server binary, building it
// if needed. The binary is cached under os.TempDir() keyed by a hash of its
// sources, go.mod, go.sum and the Go version, so parallel test binaries of
// different packages build it once between them and a source change rebuilds it.
func BuildServer(t testing.TB) string {
	t.Helper()
	bin, err := buildServer()
	if err != nil {
		t.Fatalf("testfixture: building the fixture MCP server: %v", err)
	}
	return bin
}

func buildServer() (string, error) {
	srcDir, modRoot, err := sourceDirs()
	if err != nil {
		return "", err
	}
	key, err := sourceKey(srcDir, modRoot)
	if err != nil {
		return "", err
	}
	cacheDir := filepath.Join(os.TempDir(), "pml-testfixture")
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return "", fmt.Errorf("cache dir: %w", err)
	}
	bin := filepath.Join(cacheDir, "mcpserver-"+key)
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}

	// The lock serialises builders across goroutines and test processes.
	unlock, err := filelock.Lock(bin + ".lock")
	if err != nil {
		return "", err
	}
	defer unlock()
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}

	tmp := fmt.Sprintf("%s.%d.tmp", bin, os.Getpid())
	cmd := exec.Command("go", "build", "-o", tmp, ".")
	cmd.Dir = srcDir
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %w\n%s", err, out)
	}
	if err := os.Rename(tmp, bin); err != nil {
		return "", fmt.Errorf("install binary: %w", err)
	}
	return bin, nil
}

// sourceDirs locates the fixture's sources next to this file and the module
// root above them. Tests always run on the machine that compiled them, so
// the compile-time path is valid.
func sourceDirs() (srcDir, modRoot string, err error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", "", errors.New("cannot locate testfixture sources")
	}
	srcDir = filepath.Join(filepath.Dir(file), "mcpserver")
	for dir := srcDir; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return srcDir, dir, nil
		}
		if filepath.Dir(dir) == dir {
			return "", "", fmt.Errorf("no go.mod above %s", srcDir)
		}
	}
}

func sourceKey(srcDir, modRoot string) (string, error) {
	files := []string{filepath.Join(modRoot, "go.mod"), filepath.Join(modRoot, "go.sum")}
	goFiles, err := filepath.Glob(filepath.Join(srcDir, "*.go"))
	if err != nil {
		return "", fmt.Errorf("list sources: %w", err)
	}
	slices.Sort(goFiles)
	files = append(files, goFiles...)

	h := sha256.New()
	fmt.Fprintf(h, "%s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	for _, name := range files {
		if err := hashFile(h, name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

func hashFile(w io.Writer, name string) error {
	f, err := os.Open(name)
	if err != nil {
		return fmt.Errorf("hash source: %w", err)
	}
	defer f.Close()
	fmt.Fprintf(w, "%s\n", filepath.Base(name))
	if _, err := io.Copy(w, f); err != nil {
		return fmt.Errorf("hash source %s: %w", name, err)
	}
	return nil
}
