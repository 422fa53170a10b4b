package engine

import (
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"
)

// A VM whose code waits on a slow tool call, or on a person's approval, keeps
// its whole heap resident while it does nothing: about 200 KiB for a fresh
// runtime with the bridge, most of it the engine's built-in objects. Freeze
// puts that heap away in Go memory, much smaller, and gives its pages back to
// the system; Thaw writes it back before the VM runs again
// (docs/performance.md "What one parked execution holds").
//
// The image is small because VM heaps look alike: every runtime builds the
// same built-ins in the same order, and the arena places them at the same
// offsets. Only pointers into the heap differ between two VMs, by the
// distance between their regions. So each word is first made independent of
// where its region lies (relocate), then compared with the same word of a
// reference heap, the first one frozen in the process, and only the words
// that differ are kept: a page costs a bitmap of eight words plus those.

const pageWords = pageSize / 8

// relocatedBase is where relocate moves pointers into a region: far above
// any user-space address, so that the range it occupies never overlaps a
// region.
const relocatedBase = 1 << 63

// relocate swaps the words that point into [base, base+size) with those in
// [relocatedBase, relocatedBase+size). A swap of two disjoint ranges is its
// own inverse, so the same function undoes it, and every 64-bit value comes
// back exactly, whether it was a pointer or not.
func relocate(w, base, size uint64) uint64 {
	switch {
	case w-base < size:
		return w - base + relocatedBase
	case w-relocatedBase < size:
		return w - relocatedBase + base
	}
	return w
}

// heapReference is the relocated image of the first heap frozen in the
// process, which later images are written against. It is set once and never
// changed after, like the pool of arenas it is process-wide on purpose: it is
// a dictionary, not state any VM depends on.
var heapReference atomic.Pointer[[]uint64]

// freezeScratch holds the buffers Freeze writes an image in before it knows
// its size.
var freezeScratch = sync.Pool{New: func() any { return new([]uint64) }}

// HeapImage is a VM heap put away by Freeze.
type HeapImage struct {
	pages int
	ref   []uint64 // the reference it was written against
	data  []uint64 // per page: a bitmap of 8 words (bit set: the word differs from the reference), then the words that differ
}

// Bytes is the Go memory the image holds.
func (img *HeapImage) Bytes() int { return 8 * cap(img.data) }

// Freeze moves the VM's heap into an image and gives its pages back to the
// system. Nothing may use the VM until Thaw has written the image back. A
// revoked VM faults here: call it on a goroutine that turns faults into
// panics (debug.SetPanicOnFault), or not on a VM that may be revoked.
func (e *VM) Freeze() *HeapImage {
	a := e.arena
	base := a.region.base
	pages := int((a.top - base + pageSize - 1) / pageSize)
	mem := unsafe.Slice((*uint64)(cPointer(base)), pages*pageWords)
	size := uint64(a.region.size())
	var ref []uint64
	if p := heapReference.Load(); p != nil {
		ref = *p
	}
	scratch := freezeScratch.Get().(*[]uint64)
	defer freezeScratch.Put(scratch)
	img := &HeapImage{pages: pages, ref: ref, data: (*scratch)[:0]}
	var zeros [pageWords]uint64
	for p := range pages {
		at := len(img.data)
		img.data = append(img.data, 0, 0, 0, 0, 0, 0, 0, 0)
		mask := (*[8]uint64)(img.data[at:])
		refPage := zeros[:]
		if (p+1)*pageWords <= len(ref) {
			refPage = ref[p*pageWords : (p+1)*pageWords]
		}
		for i, w := range mem[p*pageWords : (p+1)*pageWords] {
			if w = relocate(w, uint64(base), size); w != refPage[i] {
				mask[i/64] |= 1 << (i % 64)
				img.data = append(img.data, w)
				mask = (*[8]uint64)(img.data[at:])
			}
		}
	}
	if ref == nil {
		own := make([]uint64, len(mem))
		for i, w := range mem {
			own[i] = relocate(w, uint64(base), size)
		}
		heapReference.CompareAndSwap(nil, &own)
	}
	// Give back the heap and the pages above it that a recycled region kept
	// mapped in (arenaKeep): nothing lies above the bump pointer.
	a.region.discard(base, max(base+uintptr(pages)*pageSize, base+arenaKeep))
	*scratch = img.data
	img.data = slices.Clone(img.data) // the image keeps no spare room
	return img
}

// Thaw writes a frozen heap back.
func (e *VM) Thaw(img *HeapImage) {
	a := e.arena
	base := a.region.base
	mem := unsafe.Slice((*uint64)(cPointer(base)), img.pages*pageWords)
	size := uint64(a.region.size())
	ref := img.ref
	a.region.populate(base, base+uintptr(img.pages)*pageSize)
	k := 0
	var zeros [pageWords]uint64
	for p := range img.pages {
		mask := img.data[k : k+8]
		k += 8
		page := mem[p*pageWords : (p+1)*pageWords]
		refPage := zeros[:]
		if (p+1)*pageWords <= len(ref) {
			refPage = ref[p*pageWords : (p+1)*pageWords]
		}
		// The pages read as zeros since Freeze: writing only the other
		// words leaves pages of zeros unmapped.
		for i, r := range refPage {
			w := r
			if mask[i/64]&(1<<(i%64)) != 0 {
				w = img.data[k]
				k++
			}
			if w != 0 {
				page[i] = relocate(w, uint64(base), size)
			}
		}
	}
}
