package rawio

import (
	"io"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// File is a pipe or a regular file whose reads and writes are raw system
// calls: a pipe's are made through the poller (a read or write the kernel
// cannot serve at once returns EAGAIN and waits in the poller, as
// os.File's does), and one the kernel serves is made without telling the
// runtime a system call began.
//
// Why: os.File's read and write tell the runtime, and the runtime wakes its
// monitor thread when it had gone to sleep, which it does whenever every
// processor is idle: each time pml stdio waits for its client or a local
// server. So the first read after every wait woke the monitor, which then
// polled at its fastest rate through the busy stretch after it: a sixth of
// pml stdio's CPU, and the waking thread's time on the answer's path
// (docs/performance.md "pml stdio's threads"). The monitor is there to
// take a processor from a thread stuck in the kernel; a call on a
// non-blocking pipe never waits for another process, nor does a local
// regular file's, which returns once the page cache has the bytes. (Under
// writeback pressure the kernel may make a write wait for the disk: the
// processor waits with it, as a thread does for a page fault.)
type File struct {
	*os.File
	rc syscall.RawConn // nil: the os.File's own reads and writes
}

// Raw returns f with raw reads and writes when its descriptor is
// non-blocking (in the poller: a pipe from os.Pipe, or one Pollable
// returned) or a regular file on a local file system (Stater's); else (a
// blocking pipe, a terminal, a file whose writes may wait for another
// machine) f's own. The File uses f, which stays its owner.
func Raw(f *os.File) *File {
	rc, err := f.SyscallConn()
	if err != nil {
		return &File{File: f}
	}
	raw := false
	_ = rc.Control(func(fd uintptr) {
		var st unix.Stat_t
		if unix.Fstat(int(fd), &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG {
			var fs unix.Statfs_t
			raw = unix.Fstatfs(int(fd), &fs) == nil && localFileSystem(uint32(fs.Type))
			return
		}
		fl, err := unix.FcntlInt(fd, unix.F_GETFL, 0)
		raw = err == nil && fl&unix.O_NONBLOCK != 0
	})
	if !raw {
		return &File{File: f}
	}
	return &File{File: f, rc: rc}
}

// Read reads up to len(p) bytes, a pipe's waiting in the poller until some
// are there; io.EOF once the other end closed (or at a file's end).
func (f *File) Read(p []byte) (int, error) {
	if f.rc == nil || len(p) == 0 {
		return f.File.Read(p)
	}
	n, err := rawRead(f.rc, p)
	if err != nil && err != io.EOF {
		err = &os.PathError{Op: "read", Path: f.Name(), Err: err}
	}
	return n, err
}

// Write writes all of p, a pipe's waiting in the poller while it is full.
func (f *File) Write(p []byte) (int, error) {
	if f.rc == nil || len(p) == 0 {
		return f.File.Write(p)
	}
	n, err := rawWrite(f.rc, p)
	if err != nil {
		err = &os.PathError{Op: "write", Path: f.Name(), Err: err}
	}
	return n, err
}

// rawRead reads once into p, which is not empty, through rc: a read the
// kernel cannot serve at once waits in the poller. io.EOF for a read of
// nothing; else the poller's error (a deadline, a close) or the errno.
func rawRead(rc syscall.RawConn, p []byte) (int, error) {
	var n int
	var errno syscall.Errno
	err := rc.Read(func(fd uintptr) bool {
		for {
			r, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
			switch e {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false
			}
			n, errno = int(r), e
			return true
		}
	})
	switch {
	case err != nil:
		return 0, err
	case errno != 0:
		return 0, errno
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// rawWrite writes all of p through rc, waiting in the poller while the
// kernel takes no more; the poller's error or the errno stops it.
func rawWrite(rc syscall.RawConn, p []byte) (int, error) {
	written := 0
	var errno syscall.Errno
	err := rc.Write(func(fd uintptr) bool {
		for written < len(p) {
			r, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&p[written])), uintptr(len(p)-written))
			switch e {
			case 0:
				written += int(r)
			case syscall.EINTR:
			case syscall.EAGAIN:
				return false
			default:
				errno = e
				return true
			}
		}
		return true
	})
	switch {
	case err != nil:
		return written, err
	case errno != 0:
		return written, errno
	}
	return written, nil
}

// ReadAt reads from f at off with one raw pread(2), for a file whose reads
// never wait for a disk or another machine: one the kernel writes as it
// is read, such as /proc/self/statm, which admission reads every 10 ms
// while executions run (docs/performance.md "The trace after the answer").
// io.EOF when nothing is left at off.
func ReadAt(f *os.File, p []byte, off int64) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	rc, err := f.SyscallConn()
	if err != nil || unsafe.Sizeof(uintptr(0)) != 8 {
		// A 32-bit system passes the offset in two registers, placed as
		// each architecture places them: os.File knows how.
		return f.ReadAt(p, off)
	}
	var n int
	var errno syscall.Errno
	if err := rc.Control(func(fd uintptr) {
		for {
			r, _, e := syscall.RawSyscall6(syscall.SYS_PREAD64, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), uintptr(off), 0, 0)
			if e == syscall.EINTR {
				continue
			}
			n, errno = int(r), e
			return
		}
	}); err != nil {
		return 0, &os.PathError{Op: "read", Path: f.Name(), Err: err}
	}
	switch {
	case errno != 0:
		return 0, &os.PathError{Op: "read", Path: f.Name(), Err: errno}
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}
