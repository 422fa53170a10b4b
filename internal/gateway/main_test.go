package gateway_test

import (
	"os"
	"testing"

	"github.com/pml-go/pml/internal/gcpolicy"
)

// TestMain runs the tests and benchmarks with the collector's pace of the
// pml binary, whose gateway they stand in for.
func TestMain(m *testing.M) {
	gcpolicy.Apply()
	os.Exit(m.Run())
}
