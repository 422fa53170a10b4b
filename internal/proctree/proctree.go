// Package proctree ends a child process and everything it started as one:
// a process group on Unix, a Job Object on Windows. The package's shell
// commands (internal/tools/local) and local MCP servers (internal/upstream)
// start programs that start others (sh runs a pipeline, npx runs node); a
// timeout or a stop must not leave those behind (docs/security.md "On
// Windows").
//
// Use: New before cmd.Start, Started right after it succeeds, then Kill or
// Terminate as needed, and Close once the child has been waited for.
package proctree

import (
	"os/exec"
	"sync"
)

// Tree is one started command's process tree.
type Tree struct {
	cmd *exec.Cmd

	mu     sync.Mutex
	killed bool // Kill ran: Started must not let the child run
	sys    sysTree
}

// New prepares cmd so that its tree can be ended as one; call it before
// cmd.Start, after setting any SysProcAttr of one's own.
func New(cmd *exec.Cmd) *Tree {
	t := &Tree{cmd: cmd}
	prepare(cmd)
	return t
}

// Started completes what New began, once cmd.Start has succeeded. On error
// the child has been killed (before it ran anything); the caller still waits
// for it.
func (t *Tree) Started() error {
	return t.started()
}

// Terminate asks the tree to end (SIGTERM to the group on Unix). Windows has
// no such request for a console program: there it kills.
func (t *Tree) Terminate() error {
	return t.terminate()
}

// Kill ends every process of the tree at once.
func (t *Tree) Kill() error {
	t.mu.Lock()
	t.killed = true
	t.mu.Unlock()
	return t.kill()
}

// Close releases what the tree holds. On Windows that kills what is left of
// the tree (the job is created to kill on close), so a background process
// does not outlive its call or server there; on Unix it does nothing.
func (t *Tree) Close() error {
	return t.close()
}
