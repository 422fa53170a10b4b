//go:build linux

// Package scale_test runs several real `pml gateway` processes on one
// PostgreSQL database behind a round-robin reverse proxy, and checks what a
// deployment of replicas promises: any replica serves any request, nothing a
// replica needs lives in another one's memory, and faults (a replica killed,
// the database restarted, an upstream server killed, the gateway unreachable)
// fail cleanly and recover by themselves.
//
// The fault tests run in the default `go test`; the load test needs the
// `loadtest` build tag (see load_test.go). Linux only, as
// internal/store/pgtest is: its PostgreSQL cluster, /proc and raw sockets.
package scale_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// pmlBin is the `pml` binary built once by TestMain for every test.
var pmlBin string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "pml-scale-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "scale: temp dir:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	pmlBin = filepath.Join(dir, "pml")
	build := exec.Command("go", "build", "-o", pmlBin, "github.com/pml-go/pml/cmd/pml")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "scale: go build ./cmd/pml: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}
