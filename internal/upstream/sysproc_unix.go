//go:build unix && !linux

package upstream

import "syscall"

// sysProcAttr puts the child in its own process group, so stopping it also
// stops whatever it spawned. Only Linux has a parent-death signal.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
