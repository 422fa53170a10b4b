package upstream

import "syscall"

// sysProcAttr asks the kernel to SIGKILL the child if we die without
// cleaning up (internal/proctree adds its own process group). Pdeathsig
// fires when the OS thread that forked the child exits; Go keeps its threads
// for the life of the process unless a goroutine exits while locked to one,
// which we never do.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
