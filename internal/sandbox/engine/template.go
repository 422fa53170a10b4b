package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"unsafe"

	lib "modernc.org/libquickjs"
)

// A Template is a snapshot of a freshly set-up VM's heap from which new VMs
// are copied instead of built (docs/performance.md "VM templates"). Building
// a VM (a runtime, a context with every standard built-in, then the caller's
// setup, the sandbox's bridge) costs hundreds of microseconds of engine
// code; copying the heap it leaves behind costs a memcpy.
//
// The engine has no snapshot format, but a VM's whole heap is its arena
// (arena.go), so the heap's bytes are the VM. What ties them to one place
// are the pointers into the arena itself. NewTemplate finds them by building
// the VM twice, in two fresh arenas, and comparing the heaps word by word:
//   - a word equal in both is a constant;
//   - a word that differs by exactly the distance between the arenas, and
//     points into the heap, is a pointer, moved by the same distance in
//     each copy;
//   - the words that lead out of the heap to this VM's Go objects (the
//     arena, the interrupter, the VM) are set by Clone for the copy, and
//     Math.random's seed (the clock) is drawn afresh;
//   - tables ordered by address (the engine hashes an object shape by its
//     prototype's address, so the shapes' hash chains differ) are kept as
//     the first build has them, moved: they stay consistent with the hashes
//     stored beside them, and a lookup by a copy's own address misses and
//     makes a new entry, as for any new object;
//   - other values that differ but cannot be a struct's address (a 32-bit
//     hash, what a struct's padding took from the engine's stack) are kept.
//
// Any other word (an aligned address out of the heap) makes NewTemplate
// fail, and the caller builds every VM instead. Each copy is private: VMs
// share no memory.
//
// One thing the comparison cannot see: a Map, Set, WeakMap or WeakSet
// hashes an object key by its address, so such a key stored by setup is
// not found in a copy. Setup must leave them empty of object keys (the
// bridge's one WeakMap is empty until code runs).
type Template struct {
	image  []byte   // the heap, [base, top) of the first build's arena
	base   uintptr  // where the first build's arena began
	relocs []uint32 // the word indexes in image that point into the arena
	top    uintptr  // offsets from base: the bump pointer,
	free   [numClasses]uintptr
	rt     uintptr // the runtime,
	ctx    uintptr // the context,
	scrat  uintptr // the scratch memory,
	kept   []Value // and the values setup returned, relative to base
}

// Pointers out of the heap, which the copy must lead to its own objects.
var (
	offMallocOpaque    = unsafe.Offsetof(lib.TJSRuntime{}.Fmalloc_ctx) + unsafe.Offsetof(lib.TJSMallocContext{}.Fmalloc_state) + unsafe.Offsetof(lib.TJSMallocState{}.Fopaque)
	offInterruptOpaque = unsafe.Offsetof(lib.TJSRuntime{}.Finterrupt_opaque)
	offContextOpaque   = unsafe.Offsetof(lib.TJSContext{}.Fuser_opaque)
	offRandomState     = unsafe.Offsetof(lib.TJSContext{}.Frandom_state)
)

// NewTemplate builds the VM that setup sets up, twice, and keeps its heap.
// setup must do the same on every call (it may install host functions with
// InstallHost: the copy's HostFunc is given to Clone); the values it returns
// stay alive in the template and come back, moved, from each Clone.
func NewTemplate(memoryLimit int64, setup func(*VM) ([]Value, error)) (*Template, error) {
	a, keptA, err := buildForTemplate(memoryLimit, setup)
	if err != nil {
		return nil, err
	}
	defer a.Close()
	b, keptB, err := buildForTemplate(memoryLimit, setup)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	return compareBuilds(a, b, keptA, keptB)
}

// buildForTemplate builds in a new region, whose untouched bytes read as
// zeros, and which zeroes the blocks the engine frees: what an earlier VM or
// an earlier use of a block left in the bytes the engine allocates but never
// writes (a buffer's spare room) would differ between the builds.
func buildForTemplate(memoryLimit int64, setup func(*VM) ([]Value, error)) (*VM, []Value, error) {
	r, err := reserveRegion(regionSize(memoryLimit))
	if err != nil {
		return nil, nil, err
	}
	vm, err := newIn(&arena{region: r, top: r.base, scrub: true})
	if err != nil {
		return nil, nil, err
	}
	kept, err := setup(vm)
	if err != nil {
		vm.Close()
		return nil, nil, err
	}
	return vm, kept, nil
}

var errNotRelocatable = errors.New("engine: the VM's heap cannot be copied")

func compareBuilds(a, b *VM, keptA, keptB []Value) (*Template, error) {
	ba, bb := a.arena.region.base, b.arena.region.base
	n := a.arena.top - ba
	if n != b.arena.top-bb || n%8 != 0 || len(keptA) != len(keptB) {
		return nil, fmt.Errorf("%w: the two builds differ in size", errNotRelocatable)
	}
	t := &Template{base: ba, top: n, rt: a.rt - ba, ctx: a.ctx - ba, scrat: a.scratch - ba}
	if b.rt-bb != t.rt || b.ctx-bb != t.ctx || b.scratch-bb != t.scrat {
		return nil, fmt.Errorf("%w: the two builds differ in layout", errNotRelocatable)
	}
	for i := range a.arena.free {
		fa, fb := a.arena.free[i], b.arena.free[i]
		if (fa == 0) != (fb == 0) || (fa != 0 && fa-ba != fb-bb) {
			return nil, fmt.Errorf("%w: the two builds differ in free blocks", errNotRelocatable)
		}
		if fa != 0 {
			t.free[i] = fa - ba
		}
	}
	imgA := unsafe.Slice((*byte)(cPointer(ba)), n)
	imgB := unsafe.Slice((*byte)(cPointer(bb)), n)
	outOfHeap := map[uintptr]bool{
		t.rt + offMallocOpaque: true, t.rt + offInterruptOpaque: true,
		t.ctx + offContextOpaque: true, t.ctx + offRandomState: true,
	}
	size := uint64(a.arena.region.size())
	delta := uint64(ba - bb)
	for off := uintptr(0); off < n; off += 8 {
		wa := binary.LittleEndian.Uint64(imgA[off:])
		wb := binary.LittleEndian.Uint64(imgB[off:])
		switch {
		case wa == wb:
		case wa-wb == delta && wa-uint64(ba) <= size:
			// A pointer into the heap, or just past its end.
			t.relocs = append(t.relocs, uint32(off/8))
		case outOfHeap[off]:
		case (wa == 0 || pointsInto(wa, ba, size)) && (wb == 0 || pointsInto(wb, bb, size)):
			// Tables ordered by address (the shape hash's chains): kept as
			// the first build has them.
			if wa != 0 {
				t.relocs = append(t.relocs, uint32(off/8))
			}
		case !alignedAddress(wa) && !alignedAddress(wb):
			// A value computed from an address, or what a struct's padding
			// took from the engine's stack: kept as built.
		default:
			return nil, fmt.Errorf("%w: word %#x is %#x and %#x (bases %#x %#x)", errNotRelocatable, off, wa, wb, ba, bb)
		}
	}
	for i, v := range keptA {
		w := keptB[i]
		if isHeapTag(v.v.Ftag) {
			v.v.Fu.Fuint641 -= uint64(ba) // kept as an offset
			w.v.Fu.Fuint641 -= uint64(bb)
		}
		if v != w {
			return nil, fmt.Errorf("%w: kept value %d differs", errNotRelocatable, i)
		}
		t.kept = append(t.kept, v)
	}
	t.image = append([]byte(nil), imgA...)
	return t, nil
}

func pointsInto(w uint64, base uintptr, size uint64) bool { return w-uint64(base) < size }

// alignedAddress reports whether w could be the address of a struct of this
// process: 8-aligned, in the user half of a 48-bit address space, past page
// 0. The engine's structs are 8-aligned; what it reaches unaligned (string
// and bytecode bytes) is in its heap or static.
func alignedAddress(w uint64) bool { return w >= 1<<16 && w < 1<<47 && w%8 == 0 }

// Clone makes a VM from the template with a heap of up to memoryLimit
// bytes, whose host function (InstallHost's, in setup) calls host. It
// returns the values setup returned, as the clone holds them; the caller
// frees them as it would have freed setup's.
func (t *Template) Clone(memoryLimit int64, host HostFunc) (*VM, []Value, error) {
	a, err := arenas.get(memoryLimit)
	if err != nil {
		return nil, nil, err
	}
	if uintptr(a.region.size()) < t.top {
		arenas.put(a)
		return nil, nil, fmt.Errorf("%w: the arena is smaller than the template", errNotRelocatable)
	}
	base := a.region.base
	a.clearStale(base + t.top)
	heap := unsafe.Slice((*byte)(cPointer(base)), t.top)
	copy(heap, t.image)
	delta := uint64(base - t.base)
	words := unsafe.Slice((*uint64)(cPointer(base)), t.top/8)
	for _, i := range t.relocs {
		words[i] += delta
	}
	a.top = base + t.top
	for i, f := range t.free {
		if f != 0 {
			a.free[i] = base + f
		}
	}
	e := &VM{tls: cStacks.get(), arena: a, intr: newInterrupter(), rt: base + t.rt, ctx: base + t.ctx, scratch: base + t.scrat, host: host}
	a.rt = e.rt
	(*lib.TJSRuntime)(cPointer(e.rt)).Fmalloc_ctx.Fmalloc_state.Fopaque = uintptr(unsafe.Pointer(a))
	(*lib.TJSContext)(cPointer(e.ctx)).Frandom_state = rand.Uint64() | 1 // never 0
	lib.XJS_SetInterruptHandler(e.tls, e.rt, funcAddr(interruptHandler), uintptr(unsafe.Pointer(e.intr)))
	lib.XJS_SetContextOpaque(e.tls, e.ctx, uintptr(unsafe.Pointer(e)))
	kept := make([]Value, len(t.kept))
	for i, v := range t.kept {
		if isHeapTag(v.v.Ftag) {
			v.v.Fu.Fuint641 += uint64(base)
		}
		kept[i] = v
	}
	return e, kept, nil
}

// isHeapTag reports whether a value with this tag points into the heap:
// the engine's reference-counted values have negative tags.
func isHeapTag(tag int64) bool { return tag < 0 }
