//go:build unix

package rawio

import (
	"os"

	"golang.org/x/sys/unix"
)

// Pollable returns a file on f's descriptor that waits in the poller, when
// f is a pipe or a socket, which only this process reads (or writes) in
// practice: an MCP client spawns its server with pipes of its own. A
// terminal or a regular file is returned as it is: a terminal's mode is
// shared with the shell, and a regular file is never waited on.
//
// The returned file owns the descriptor from then on; f must not be used
// any more (its Fd would put the descriptor back in blocking mode).
func Pollable(f *os.File) *os.File {
	rc, err := f.SyscallConn()
	if err != nil {
		return f
	}
	var fd uintptr
	pollable := false
	_ = rc.Control(func(d uintptr) {
		var st unix.Stat_t
		if unix.Fstat(int(d), &st) != nil {
			return
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFIFO, unix.S_IFSOCK:
		default:
			return
		}
		if unix.SetNonblock(int(d), true) != nil {
			return
		}
		fd, pollable = d, true
	})
	if !pollable {
		return f
	}
	// os.NewFile puts a descriptor that is already non-blocking in the
	// poller.
	return os.NewFile(fd, f.Name())
}
