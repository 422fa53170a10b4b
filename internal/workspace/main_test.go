package workspace_test

import (
	"os"
	"testing"

	"github.com/pml-go/pml/internal/gcpolicy"
)

func TestMain(m *testing.M) {
	gcpolicy.Apply() // as cmd/pml does: the benchmarks here stand in for the package
	os.Exit(m.Run())
}
