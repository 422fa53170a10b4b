package stdioorder

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// unreadFunc says how many bytes written to f its reader has not taken: the
// bytes in the pipe for a pipe, the bytes not yet consumed by the peer for
// a socket (Node gives a child's stdio unix socket pairs).
//
// It reaches the descriptor through SyscallConn, not Fd: Fd would put a
// descriptor that waits in the poller back in blocking mode (see rawio).
func unreadFunc(f *os.File) func() (int, bool) {
	rc, err := f.SyscallConn()
	if err != nil {
		return unknown
	}
	var st unix.Stat_t
	if err := control(rc, func(fd int) error { return unix.Fstat(fd, &st) }); err != nil {
		return unknown
	}
	var req uint
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFIFO:
		req = unix.TIOCINQ // FIONREAD: on either end of a pipe, what is in it
	case unix.S_IFSOCK:
		req = unix.SIOCOUTQ // for a unix socket: held until the peer reads it
	default:
		return unknown
	}
	return func() (int, bool) {
		var n int
		err := control(rc, func(fd int) (err error) {
			n, err = unix.IoctlGetInt(fd, req)
			return err
		})
		return n, err == nil
	}
}

// control runs fn on rc's descriptor and returns fn's error or rc's.
func control(rc syscall.RawConn, fn func(fd int) error) error {
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = fn(int(fd)) }); err != nil {
		return err
	}
	return ferr
}

func unknown() (int, bool) { return 0, false }
