package stdioorder

import (
	"os"

	"golang.org/x/sys/unix"
)

// unreadFunc says how many bytes written to f its reader has not taken: the
// bytes in the pipe for a pipe, the bytes not yet consumed by the peer for
// a socket (Node gives a child's stdio unix socket pairs).
func unreadFunc(f *os.File) func() (int, bool) {
	fd := int(f.Fd())
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
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
		n, err := unix.IoctlGetInt(fd, req)
		return n, err == nil
	}
}

func unknown() (int, bool) { return 0, false }
