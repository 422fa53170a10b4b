// Package e2e runs the pml binary as an AI client and a workspace see it:
// `pml stdio`, `pml serve`, `pml exec` and `pml init` against a real
// gateway on loopback and real local MCP servers. Tests of the package's Go
// API stay beside it in internal/workspace; these need the command above it.
package e2e

import (
	"os"
	"testing"

	"github.com/pml-go/pml/internal/gcpolicy"
	"github.com/pml-go/pml/internal/testfixture"
)

// pmlBinary returns the path of the pml binary of this module, built on
// first use (testfixture.BuildPML), so a run of a single test that needs no
// binary does not pay for the link.
func pmlBinary(t testing.TB) string {
	t.Helper()
	return testfixture.BuildPML(t)
}

func TestMain(m *testing.M) {
	gcpolicy.Apply() // as cmd/pml does: the gateway these tests start runs in this process
	os.Exit(m.Run())
}
