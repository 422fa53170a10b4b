package rawio

import (
	"errors"
	"os"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Stater stats the files of one directory. On a local file system its stat
// is a raw system call: pml stdio stats .pml.json on every execution, the
// first system call after the wait for the request, and os.Stat's woke the
// runtime's monitor each time, which then polled through the execution: a
// twentieth of pml stdio's CPU (docs/performance.md "pml stdio's
// threads"). A stat on a network or user-space file system may wait for
// another machine, with the processor held: there it stays os.Stat.
type Stater struct {
	raw atomic.Bool // dir is on a local file system, and statx works
}

// NewStater returns a Stater for the files under dir.
func NewStater(dir string) *Stater {
	s := &Stater{}
	var fs unix.Statfs_t
	if unix.Statfs(dir, &fs) == nil && localFileSystem(uint32(fs.Type)) {
		s.raw.Store(true)
	}
	return s
}

// localFileSystem reports whether a file system of this type answers a
// stat from this machine's memory or disks.
func localFileSystem(magic uint32) bool {
	switch magic {
	case unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC, unix.TMPFS_MAGIC,
		unix.OVERLAYFS_SUPER_MAGIC, unix.F2FS_SUPER_MAGIC, unix.BCACHEFS_SUPER_MAGIC, unix.RAMFS_MAGIC:
		return true
	}
	return false
}

// Stat returns path's size and modification time, as os.Stat does.
func (s *Stater) Stat(path string) (size int64, mod time.Time, err error) {
	if s.raw.Load() {
		size, mod, err = statx(path)
		if !errors.Is(err, unix.ENOSYS) {
			return size, mod, err
		}
		s.raw.Store(false) // a kernel before 4.11, or a filter refusing statx
	}
	fi, err := os.Stat(path)
	if err != nil {
		return 0, time.Time{}, err
	}
	return fi.Size(), fi.ModTime(), nil
}

func statx(path string) (int64, time.Time, error) {
	p, err := unix.BytePtrFromString(path)
	if err != nil {
		return 0, time.Time{}, &os.PathError{Op: "statx", Path: path, Err: err}
	}
	var st unix.Statx_t
	cwd := unix.AT_FDCWD // a negative int: its uintptr is made at run time
	_, _, e := unix.RawSyscall6(unix.SYS_STATX, uintptr(cwd), uintptr(unsafe.Pointer(p)),
		uintptr(unix.AT_STATX_SYNC_AS_STAT), uintptr(unix.STATX_SIZE|unix.STATX_MTIME), uintptr(unsafe.Pointer(&st)), 0)
	if e != 0 {
		return 0, time.Time{}, &os.PathError{Op: "statx", Path: path, Err: e}
	}
	return int64(st.Size), time.Unix(st.Mtime.Sec, int64(st.Mtime.Nsec)), nil
}
