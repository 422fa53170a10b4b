// Package gcpolicy sets how often the garbage collector of a pml process
// runs.
//
// Every MCP request through the Go SDK allocates about half a megabyte of
// short-lived buffers (its JSON decoder takes a fresh 32 KiB buffer per
// message part), while the live heap of a pml process is small. At Go's
// default GOGC of 100 the collector then runs every few requests: it took a
// third of the CPU of a loopback round trip and 1 ms of the 3 ms a hybrid
// execution adds. At 400 the heap may grow to five times the live data
// between collections, tens of megabytes here, and that cost mostly goes.
package gcpolicy

import (
	"os"
	"runtime/debug"
)

// Percent is the GOGC pml runs with unless the environment sets GOGC.
const Percent = 400

// Apply sets the collector's pace to Percent, unless the GOGC environment
// variable chose one, and returns a function restoring the previous pace.
// cmd/pml applies it at start; benchmarks that stand in for a pml process
// apply it too, so they measure what the binary does.
func Apply() (restore func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	old := debug.SetGCPercent(Percent)
	return func() { debug.SetGCPercent(old) }
}
