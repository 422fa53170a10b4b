// Package testfixture gives tests in any package a real MCP server to talk
// to, and the pml binary: BuildServer compiles ./mcpserver and BuildPML
// cmd/pml (once per source version, shared by all test binaries);
// StartHTTPServer runs the server over Streamable HTTP; StartGate serves, in
// process, a tool that waits until the test opens it; Workspace writes a
// workspace configured with such servers.
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
	"strings"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/filelock"
)

// BuildServer returns the path of the fixture MCP server binary, building it
// if needed. The binary is cached under os.TempDir() keyed by a hash of its
// sources, go.mod, go.sum and the Go version, so parallel test binaries of
// different packages build it once between them and a source change rebuilds it.
func BuildServer(t testing.TB) string {
	t.Helper()
	bin, err := buildCached("mcpserver", "internal/testfixture/mcpserver", func(modRoot string) ([]string, error) {
		files, err := filepath.Glob(filepath.Join(modRoot, "internal", "testfixture", "mcpserver", "*.go"))
		if err != nil {
			return nil, fmt.Errorf("list sources: %w", err)
		}
		return files, nil
	})
	if err != nil {
		t.Fatalf("testfixture: building the fixture MCP server: %v", err)
	}
	return bin
}

// BuildPML returns the path of the pml binary of this module, built as
// BuildServer builds the fixture: cached, keyed by every file of cmd/ and
// internal/ that is not a test (embedded scripts and pages included).
func BuildPML(t testing.TB) string {
	t.Helper()
	bin, err := buildCached("pml", "cmd/pml", func(modRoot string) ([]string, error) {
		var files []string
		for _, dir := range []string{"cmd", "internal"} {
			err := filepath.WalkDir(filepath.Join(modRoot, dir), func(path string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() && !strings.HasSuffix(path, "_test.go") {
					files = append(files, path)
				}
				return err
			})
			if err != nil {
				return nil, fmt.Errorf("list sources: %w", err)
			}
		}
		return files, nil
	})
	if err != nil {
		t.Fatalf("testfixture: building pml: %v", err)
	}
	return bin
}

// buildCached builds the main package at pkgDir (relative to the module
// root) into the cache as name-<key>, unless it is there already; sources
// lists the files besides go.mod and go.sum whose contents make the key.
func buildCached(name, pkgDir string, sources func(modRoot string) ([]string, error)) (string, error) {
	modRoot, err := moduleRoot()
	if err != nil {
		return "", err
	}
	files, err := sources(modRoot)
	if err != nil {
		return "", err
	}
	key, err := sourceKey(modRoot, files)
	if err != nil {
		return "", err
	}
	cacheDir := filepath.Join(os.TempDir(), "pml-testfixture")
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return "", fmt.Errorf("cache dir: %w", err)
	}
	bin := filepath.Join(cacheDir, name+"-"+key)
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
	cmd := exec.Command("go", "build", "-o", tmp, "./"+pkgDir)
	cmd.Dir = modRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./%s: %w\n%s", pkgDir, err, out)
	}
	if err := os.Rename(tmp, bin); err != nil {
		return "", fmt.Errorf("install binary: %w", err)
	}
	pruneOlder(bin, name)
	return bin, nil
}

// pruneOlder removes the builds of other source versions of name that are
// over an hour old: each edit of the sources makes a new one (pml's is
// tens of megabytes), and a test binary of an older version still running
// has had its own for less than that.
func pruneOlder(keep, name string) {
	old, _ := filepath.Glob(filepath.Join(filepath.Dir(keep), name+"-*"))
	for _, path := range old {
		if strings.HasPrefix(path, keep) {
			continue // keep itself and its lock
		}
		if info, err := os.Stat(path); err == nil && time.Since(info.ModTime()) > time.Hour {
			_ = os.Remove(path)
		}
	}
}

// moduleRoot is the directory of the go.mod above this file. Tests always
// run on the machine that compiled them, so the compile-time path is valid.
func moduleRoot() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("cannot locate testfixture sources")
	}
	for dir := filepath.Dir(file); ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("no go.mod above %s", file)
		}
	}
}

func sourceKey(modRoot string, sources []string) (string, error) {
	files := append([]string{filepath.Join(modRoot, "go.mod"), filepath.Join(modRoot, "go.sum")}, sources...)
	slices.Sort(files[2:])
	h := sha256.New()
	fmt.Fprintf(h, "%s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	for _, name := range files {
		if err := hashFile(h, modRoot, name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

func hashFile(w io.Writer, modRoot, name string) error {
	f, err := os.Open(name)
	if err != nil {
		return fmt.Errorf("hash source: %w", err)
	}
	defer f.Close()
	rel, err := filepath.Rel(modRoot, name)
	if err != nil {
		return fmt.Errorf("hash source: %w", err)
	}
	fmt.Fprintf(w, "%s\n", rel)
	if _, err := io.Copy(w, f); err != nil {
		return fmt.Errorf("hash source %s: %w", name, err)
	}
	return nil
}
