package rawio

import (
	"io"
	"net"
	"os"
	"syscall"
)

// Conn is a stream socket whose reads and writes are raw system calls
// through the poller, as File's are, for the same reason: net.Conn's tell
// the runtime a system call begins, which wakes its monitor whenever it
// went to sleep, as it does each time every processor is idle. The package
// goes idle between any two requests to its gateway (docs/performance.md
// "The hybrid path's sockets").
type Conn struct {
	net.Conn
	rc syscall.RawConn
}

// NewConn returns c with raw reads and writes when it is a socket of this
// process (a TCP or Unix connection); else c. Deadlines and Close work as
// on c, which stays the owner of the descriptor.
func NewConn(c net.Conn) net.Conn {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return c
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return c
	}
	return &Conn{Conn: c, rc: rc}
}

// Read reads up to len(p) bytes, waiting in the poller (and its deadline)
// until some are there; io.EOF once the peer closed. Errors are net's.
func (c *Conn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return c.Conn.Read(p)
	}
	n, err := rawRead(c.rc, p)
	if err != nil && err != io.EOF {
		err = c.opError("read", err)
	}
	return n, err
}

// Write writes all of p, waiting in the poller (and its deadline) while
// the socket's buffer is full. Errors are net's.
func (c *Conn) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return c.Conn.Write(p)
	}
	n, err := rawWrite(c.rc, p)
	if err != nil {
		err = c.opError("write", err)
	}
	return n, err
}

// CloseWrite half-closes a TCP or Unix connection, as c's own does.
func (c *Conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// opError wraps err as net.Conn's Read and Write do, so a deadline's error
// is a net.Error that says Timeout and a closed connection's is
// net.ErrClosed.
func (c *Conn) opError(op string, err error) error {
	if errno, ok := err.(syscall.Errno); ok {
		err = os.NewSyscallError(op, errno)
	}
	return &net.OpError{Op: op, Net: c.LocalAddr().Network(), Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}
