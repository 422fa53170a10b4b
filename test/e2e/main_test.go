// Package e2e runs the pml binary as an AI client and a workspace see it:
// `pml stdio`, `pml serve`, `pml exec` and `pml init` against a real
// gateway on loopback and real local MCP servers. Tests of the package's Go
// API stay beside it in internal/workspace; these need the command above it.
package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/pml-go/pml/internal/gcpolicy"
)

// binDir holds the pml binary the tests spawn. TestMain owns it (created
// before the tests, removed after); the binary itself is built on first use,
// once, so a run of a single test that needs no binary does not pay for the
// link.
var binDir string

var buildPML = sync.OnceValues(func() (string, error) {
	bin := filepath.Join(binDir, "pml")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	// The package path builds from the module this test belongs to,
	// whatever the working directory of the test binary.
	out, err := exec.Command("go", "build", "-o", bin, "github.com/pml-go/pml/cmd/pml").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build ./cmd/pml: %w\n%s", err, out)
	}
	return bin, nil
})

// pmlBinary returns the path of the freshly built pml binary.
func pmlBinary(t testing.TB) string {
	t.Helper()
	bin, err := buildPML()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

func TestMain(m *testing.M) {
	gcpolicy.Apply() // as cmd/pml does: the gateway these tests start runs in this process
	dir, err := os.MkdirTemp("", "pml-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "temp dir:", err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}
