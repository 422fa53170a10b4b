//go:build !unix

package engine

import (
	"errors"
	"unsafe"
)

// region is a VM heap in Go memory where the system offers no way to
// reserve and revoke address space from here. The heap is still bounded by
// the memory limit, but a run stuck in a native loop of the engine cannot be
// revoked and stops only when that loop returns (docs/limits.md).
type region struct {
	mem  []byte
	base uintptr
}

func reserveRegion(size int) (region, error) {
	mem := make([]byte, size)
	return region{mem: mem, base: uintptr(unsafe.Pointer(unsafe.SliceData(mem)))}, nil
}

func (r region) size() int                 { return len(r.mem) }
func (r region) end() uintptr              { return r.base + uintptr(len(r.mem)) }
func (r region) valid() bool               { return r.mem != nil }
func (r region) discard(from, to uintptr)  {}
func (r region) populate(from, to uintptr) {}
func (r region) revoke() error {
	return errors.New("revoking a VM heap is not supported on this system")
}
func (r region) unmap() {}
