//go:build unix

package engine

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// region is a reserved range of address space for one arena. Pages cost
// memory only once touched (MAP_NORESERVE), so reserving the headroom the
// allocator needs is free.
type region struct {
	mem  []byte
	base uintptr
}

func reserveRegion(size int) (region, error) {
	size = (size + pageSize - 1) &^ (pageSize - 1)
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON|unix.MAP_NORESERVE)
	if err != nil {
		return region{}, fmt.Errorf("reserve %d bytes for a VM heap: %w", size, err)
	}
	return region{mem: mem, base: uintptr(unsafe.Pointer(unsafe.SliceData(mem)))}, nil
}

func (r region) size() int    { return len(r.mem) }
func (r region) end() uintptr { return r.base + uintptr(len(r.mem)) }
func (r region) valid() bool  { return r.mem != nil }

// discard gives the whole pages in [from, to) back to the system; they read
// as zeros when touched again.
func (r region) discard(from, to uintptr) {
	from = (from + pageSize - 1) &^ (pageSize - 1)
	to &^= pageSize - 1
	if to <= from {
		return
	}
	_ = unix.Madvise(r.mem[from-r.base:to-r.base], unix.MADV_DONTNEED)
}

// revoke makes every access to the region fault.
func (r region) revoke() error {
	if err := unix.Mprotect(r.mem, unix.PROT_NONE); err != nil {
		return fmt.Errorf("revoke a VM heap: %w", err)
	}
	return nil
}

// unmap releases the region; nothing may use it after.
func (r region) unmap() {
	if r.mem != nil {
		_ = unix.Munmap(r.mem)
	}
}

// populate maps in the pages of [from, to) ahead of writing them, in one
// call rather than a fault per page (MADV_POPULATE_WRITE, Linux 5.14); where
// the system does not have it, the writes fault them in as usual.
func (r region) populate(from, to uintptr) {
	if to <= from {
		return
	}
	_ = unix.Madvise(r.mem[from-r.base:to-r.base], madvPopulateWrite)
}

const madvPopulateWrite = 23
