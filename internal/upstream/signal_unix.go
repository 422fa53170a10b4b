//go:build unix

package upstream

import (
	"os"
	"syscall"
)

// The child leads its own process group (see sysProcAttr), so signalling
// -pid reaches it and every descendant that stayed in the group.

func terminateGroup(p *os.Process) error { return syscall.Kill(-p.Pid, syscall.SIGTERM) }

func killGroup(p *os.Process) error { return syscall.Kill(-p.Pid, syscall.SIGKILL) }
