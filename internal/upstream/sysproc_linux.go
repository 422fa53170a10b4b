package upstream

import "syscall"

// sysProcAttr puts the child in its own process group, so stopping it also
// stops whatever it spawned, and asks the kernel to SIGKILL it if we die
// without cleaning up. Pdeathsig fires when the OS thread that forked the
// child exits; Go keeps its threads for the life of the process unless a
// goroutine exits while locked to one, which we never do.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
