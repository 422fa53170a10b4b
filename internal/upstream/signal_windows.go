package upstream

import (
	"os"
	"syscall"
)

// Windows has no process groups to signal nor SIGTERM: both steps kill the
// child itself.

func sysProcAttr() *syscall.SysProcAttr { return nil }

func terminateGroup(p *os.Process) error { return p.Kill() }

func killGroup(p *os.Process) error { return p.Kill() }
