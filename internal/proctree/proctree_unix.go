//go:build unix

package proctree

import (
	"os/exec"
	"syscall"
)

// sysTree is empty on Unix: the group is named by the child's pid.
type sysTree struct{}

// prepare makes the child lead its own process group, so signalling -pid
// reaches it and every descendant that stayed in the group.
func prepare(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

func (t *Tree) started() error { return nil }

func (t *Tree) terminate() error { return syscall.Kill(-t.cmd.Process.Pid, syscall.SIGTERM) }

func (t *Tree) kill() error { return syscall.Kill(-t.cmd.Process.Pid, syscall.SIGKILL) }

func (t *Tree) close() error { return nil }
