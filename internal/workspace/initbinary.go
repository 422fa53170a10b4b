package workspace

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// InitBinary picks the command .mcp.json names for the AI client to start:
// exe (this pml) itself, unless it is a temporary build of `go run`, which
// is deleted when go run exits; then the pml found on PATH by lookPath, else
// an error saying to install it first.
func InitBinary(exe string, lookPath func(string) (string, error)) (string, error) {
	if !isTempBuild(exe) {
		return exe, nil
	}
	found, err := lookPath("pml")
	if err == nil && !isTempBuild(found) {
		if abs, err := filepath.Abs(found); err == nil {
			return abs, nil
		}
		return found, nil
	}
	return "", errors.New(fmt.Sprint("this pml is a temporary build of `go run` (", exe,
		"), gone when it exits, and no pml is on PATH: run `go install ./cmd/pml` (it installs into $(go env GOPATH)/bin; put that on PATH), then `pml init`"))
}

// isTempBuild reports whether exe is where `go run` links its binaries:
// $GOTMPDIR (or the temp dir)/go-buildNNN/bNNN/exe/NAME.
func isTempBuild(exe string) bool {
	dir := filepath.Dir(exe)
	if filepath.Base(dir) != "exe" {
		return false
	}
	for d := filepath.Dir(dir); d != filepath.Dir(d); d = filepath.Dir(d) {
		if strings.HasPrefix(filepath.Base(d), "go-build") {
			return true
		}
	}
	return false
}
