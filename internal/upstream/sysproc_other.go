//go:build !linux

package upstream

import "syscall"

// sysProcAttr is empty where there is no parent-death signal: on Windows the
// job object internal/proctree puts the child in does that work (it kills
// its processes when this process ends); elsewhere a child can outlive a
// crash of this process.
func sysProcAttr() *syscall.SysProcAttr { return nil }
