//go:build !linux

package pgtest

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// supported is false: binDir skips before anything below runs. They exist
// so that the package builds for every target of the release (.ci/run).
const supported = false

type credential struct{}

var errUnsupported = errors.New("pgtest runs PostgreSQL on Linux only")

func serverCredential() (*credential, error) { return nil, errUnsupported }

func sysProcAttr(*credential) *syscall.SysProcAttr { return nil }

func chown(string, *credential) error { return errUnsupported }

func setDeathSignal(*exec.Cmd) {}

func interrupt(p *os.Process) error { return p.Kill() }

func processGone(int) bool { return false }
