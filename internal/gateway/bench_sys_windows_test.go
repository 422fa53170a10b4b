package gateway_test

import (
	"testing"
	"time"
)

// cpuTime is unknown on Windows (no getrusage): the benchmarks' cpu-ms/op
// read 0 there.
func cpuTime() time.Duration { return 0 }

// ensureFiles: Windows has no open-file limit to raise.
func ensureFiles(testing.TB, uint64) {}
