package engine

import (
	"encoding/binary"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"modernc.org/libc"
)

// A VM whose code waits on a slow tool call, or on a person's approval, keeps
// its whole heap resident while it does nothing: about 200 KiB for a fresh
// runtime with the bridge, most of it the engine's built-in objects. Freeze
// puts that heap away in Go memory, much smaller, and gives its pages back to
// the system, with the blocks of the engine's emulated C stack; Thaw writes
// the heap back before the VM runs again (docs/performance.md "What one
// parked execution holds").
//
// The image is small because VM heaps look alike: every runtime builds the
// same built-ins in the same order, and the arena places them at the same
// offsets. Only pointers into the heap differ between two VMs, by the
// distance between their regions. So each word is first made independent of
// where its region lies (relocate), then compared with the same word of a
// reference heap, the first one frozen in the process, and only the words
// that differ are kept, each as its distance from the previous one and the
// bytes in which it differs (encodeDiff): most differ in a few low bytes, and
// a page without any costs nothing. A bitmap of eight words per page and
// whole words made the image 10 to 12 KiB for the heap of BenchmarkFreezeThaw.

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
var freezeScratch = sync.Pool{New: func() any { return new([]byte) }}

// HeapImage is a VM heap put away by Freeze.
type HeapImage struct {
	pages int
	ref   []uint64 // the reference it was written against
	data  []byte   // the words that differ from the reference, in order (encodeDiff)
}

// encodeDiff appends the word at index i, which differs from the reference
// word by the bits set in x (never 0), to an image whose previous such word
// was at index prev: the gap between them as a uvarint, a byte whose bit k
// says that byte k of x is not zero, then those bytes, low to high.
func encodeDiff(data []byte, prev, i int, x uint64) []byte {
	data = binary.AppendUvarint(data, uint64(i-prev-1))
	at := len(data)
	data = append(data, 0)
	var mask byte
	for k := range 8 {
		if b := byte(x >> (8 * k)); b != 0 {
			mask |= 1 << k
			data = append(data, b)
		}
	}
	data[at] = mask
	return data
}

// diffReader reads an image's words back in the order encodeDiff wrote them.
type diffReader struct {
	data []byte
	next int // the index of the next word that differs, or -1: none is left
}

func newDiffReader(data []byte) diffReader {
	d := diffReader{data: data, next: -1}
	d.advance(-1)
	return d
}

// advance reads the position of the next word that differs after the one at
// prev.
func (d *diffReader) advance(prev int) {
	if len(d.data) == 0 {
		d.next = -1
		return
	}
	gap, n := binary.Uvarint(d.data)
	d.data = d.data[n:]
	d.next = prev + 1 + int(gap)
}

// take returns the bits in which the word at d.next differs, and moves on.
func (d *diffReader) take() uint64 {
	mask := d.data[0]
	d.data = d.data[1:]
	var x uint64
	for k := range 8 {
		if mask&(1<<k) != 0 {
			x |= uint64(d.data[0]) << (8 * k)
			d.data = d.data[1:]
		}
	}
	d.advance(d.next)
	return x
}

// Bytes is the Go memory the image holds.
func (img *HeapImage) Bytes() int { return cap(img.data) }

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
	scratch := freezeScratch.Get().(*[]byte)
	defer freezeScratch.Put(scratch)
	img := &HeapImage{pages: pages, ref: ref, data: (*scratch)[:0]}
	prev := -1
	for i, w := range mem {
		var r uint64
		if i < len(ref) {
			r = ref[i]
		}
		if x := relocate(w, uint64(base), size) ^ r; x != 0 {
			img.data = encodeDiff(img.data, prev, i, x)
			prev = i
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
	// The engine's emulated C stack keeps blocks for the depths of C calls
	// it reached, about 30 KiB once code ran. Nothing runs on it while the
	// heap is away, so it goes back to the pool for running VMs, and the
	// parked one takes a fresh one, which grows again when the VM runs on.
	cStacks.put(e.tls, false)
	e.tls = libc.NewTLS()
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
	d := newDiffReader(img.data)
	// The pages read as zeros since Freeze: writing only the other words
	// leaves pages of zeros unmapped.
	for i := range mem {
		var w uint64
		if i < len(ref) {
			w = ref[i]
		}
		if i == d.next {
			w ^= d.take()
		}
		if w != 0 {
			mem[i] = relocate(w, uint64(base), size)
		}
	}
}
