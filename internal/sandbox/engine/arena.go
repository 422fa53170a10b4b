package engine

import (
	"math/bits"
	"sync/atomic"
	"unsafe"

	"modernc.org/libc"
	lib "modernc.org/libquickjs"
)

// Every VM's engine heap lives in an arena of its own: one reserved region of
// address space that nothing else uses. That is what makes a run's end final
// (docs/limits.md): the engine cannot be stopped inside one of its native
// loops (Array.prototype.includes over 2^32 holes, a sort, a join), which
// never poll the interrupt handler, but any such loop reads the objects it
// walks. Revoking the region's access (revoke) makes the next read fault;
// the VM goroutine runs with debug.SetPanicOnFault, so the fault becomes a
// Go panic that unwinds the engine, and the goroutine ends within
// microseconds. A revoked VM is never touched again: its region is unmapped
// whole, with no engine code run to free it.
//
// It also makes closing a VM cheap: nothing in the region needs freeing one
// by one, so a used VM is dropped by resetting or unmapping its region
// rather than by the engine's own teardown, which walks every object.
//
// The allocator is deliberately simple: size classes (16-byte steps to 256
// bytes, then four per power of two), a free list per class, and a bump
// pointer. Blocks are never split or merged, so the region reserves
// arenaHeadroom times the memory limit to absorb fragmentation; only touched
// pages cost memory, and freed blocks of 64 KiB and more give theirs back to
// the system at once.

const (
	blockHeader    = 16 // capacity (8 bytes) and padding, keeping payloads 16-aligned
	minPayload     = 16 // room for the free list link
	smallClasses   = 16 // 16..256 bytes in 16-byte steps
	numClasses     = smallClasses + 4*48
	releaseBlocks  = 64 << 10 // freed blocks this large return their pages
	arenaHeadroom  = 3        // region size per byte of memory limit
	arenaSlack     = 8 << 20  // plus this, for the engine's own structures
	pageSize       = 4096
	mallocOverhead = 8 // what the engine's accounting adds per block (MMALLOC_OVERHEAD)
)

// arena is one VM's heap. It is used by the goroutine driving the VM, except
// revoked, which any goroutine may set.
type arena struct {
	region  region
	top     uintptr // next unused byte
	free    [numClasses]uintptr
	failed  bool        // an allocation failed: the engine ran out of memory
	revoked atomic.Bool // access was revoked; the next allocation panics
	rt      uintptr     // the runtime whose heap this is, once it exists
	// scrub zeroes freed blocks: what a block held before (a pointer into
	// a buffer since freed) then cannot differ between the two builds of a
	// Template (template.go).
	scrub bool
	// stale is the end of the kept pages an earlier VM wrote, which the
	// next one clears (clearStale) before using them.
	stale uintptr
}

// clearStale zeroes what an earlier VM left at and above from: stale bytes
// in the slack of the next VM's blocks would differ from every other heap,
// and a heap put away (Freeze) keeps the words that differ: 32 KiB for a
// recycled region against 6 KiB for a fresh one. A VM copied from a
// template clears only above the copy, which overwrites the rest.
func (a *arena) clearStale(from uintptr) {
	if a.stale > from {
		clear(unsafe.Slice((*byte)(cPointer(from)), a.stale-from))
	}
	a.stale = 0
}

// classOf returns the size class of a block of total bytes (header included)
// and that class's block size.
func classOf(total uintptr) (int, uintptr) {
	if total <= 256 {
		size := (total + 15) &^ 15
		return int(size/16) - 1, size
	}
	k := uintptr(bits.Len64(uint64(total-1)) - 1) // 2^k < total <= 2^(k+1)
	step := uintptr(1) << (k - 2)
	size := (total + step - 1) &^ (step - 1)
	return smallClasses + int(k-8)*4 + int((size-(1<<k))/step) - 1, size
}

// capacityOf is the block size stored in a block's header.
func capacityOf(p uintptr) uintptr { return *(*uintptr)(cPointer(p - blockHeader)) }

// alloc returns a block with room for n bytes, or 0 when the region is full.
func (a *arena) alloc(n uintptr) uintptr {
	if a.revoked.Load() {
		panic(errRevoked)
	}
	if n > uintptr(a.region.size()) {
		return 0
	}
	class, size := classOf(max(n, minPayload) + blockHeader)
	if class >= numClasses {
		return 0
	}
	if b := a.free[class]; b != 0 {
		a.free[class] = *(*uintptr)(cPointer(b))
		return b
	}
	if size > a.region.end()-a.top {
		return 0
	}
	b := a.top + blockHeader
	a.top += size
	*(*uintptr)(cPointer(b - blockHeader)) = size
	return b
}

// release puts block b back on its free list.
func (a *arena) release(b uintptr) {
	size := capacityOf(b)
	class, _ := classOf(size)
	if size >= releaseBlocks {
		// Keep the first page: it holds the header and the list link.
		a.region.discard(b+pageSize, b-blockHeader+size)
	}
	if a.scrub {
		clear(unsafe.Slice((*byte)(cPointer(b)), size-blockHeader))
	}
	*(*uintptr)(cPointer(b)) = a.free[class]
	a.free[class] = b
}

// grow makes b hold n bytes, in place when it has the room or is the last
// block, else by moving it. It returns 0, keeping b, when the region is full.
func (a *arena) grow(b, n uintptr) uintptr {
	size := capacityOf(b)
	if n+blockHeader <= size {
		return b
	}
	_, want := classOf(n + blockHeader)
	if b-blockHeader+size == a.top && want-size <= a.region.end()-a.top {
		a.top += want - size
		*(*uintptr)(cPointer(b - blockHeader)) = want
		return b
	}
	nb := a.alloc(n)
	if nb == 0 {
		return 0
	}
	copy(unsafe.Slice((*byte)(cPointer(nb)), size-blockHeader), unsafe.Slice((*byte)(cPointer(b)), size-blockHeader))
	a.release(b)
	return nb
}

// reset empties the arena for a new VM, giving back all but the first pages
// its last VM touched.
func (a *arena) reset() {
	a.region.discard(a.region.base+arenaKeep, a.top)
	a.stale = min(a.top, a.region.base+arenaKeep)
	a.top = a.region.base
	clear(a.free[:])
	a.failed = false
	a.rt = 0
	a.scrub = false
}

// arenaKeep is how much of a recycled region stays mapped in: about what a
// fresh VM touches, so that the next one does not fault it in again.
const arenaKeep = 512 << 10

// The engine's allocation functions. The engine passes its malloc state,
// whose opaque word is the arena. They keep the engine's accounting exactly
// as its default functions do (size and count in the state, the limit
// checked before allocating), so JS_SetMemoryLimit and the memory figures
// work unchanged.

func arenaOf(state uintptr) (*lib.TJSMallocState, *arena) {
	s := (*lib.TJSMallocState)(cPointer(state))
	return s, (*arena)(cPointer(s.Fopaque))
}

func arenaMalloc(tls *libc.TLS, state uintptr, size lib.Tsize_t) uintptr {
	s, a := arenaOf(state)
	if s.Fmalloc_size+size > a.limit(s) {
		a.allocationFailed()
		return 0
	}
	b := a.alloc(uintptr(size))
	if b == 0 {
		a.allocationFailed()
		return 0
	}
	s.Fmalloc_count++
	s.Fmalloc_size += lib.Tsize_t(capacityOf(b) - blockHeader + mallocOverhead)
	return b
}

func arenaFree(tls *libc.TLS, state, b uintptr) {
	if b == 0 {
		return
	}
	s, a := arenaOf(state)
	s.Fmalloc_count--
	s.Fmalloc_size -= lib.Tsize_t(capacityOf(b) - blockHeader + mallocOverhead)
	a.release(b)
}

func arenaRealloc(tls *libc.TLS, state, b uintptr, size lib.Tsize_t) uintptr {
	if b == 0 {
		if size == 0 {
			return 0
		}
		return arenaMalloc(tls, state, size)
	}
	if size == 0 {
		arenaFree(tls, state, b)
		return 0
	}
	s, a := arenaOf(state)
	old := lib.Tsize_t(capacityOf(b) - blockHeader)
	if size > old && s.Fmalloc_size+(size-old) > a.limit(s) {
		a.allocationFailed()
		return 0
	}
	nb := a.grow(b, uintptr(size))
	if nb == 0 {
		a.allocationFailed()
		return 0
	}
	s.Fmalloc_size += lib.Tsize_t(capacityOf(nb)-blockHeader) - old
	return nb
}

func arenaUsableSize(tls *libc.TLS, b uintptr) lib.Tsize_t {
	if b == 0 {
		return 0
	}
	return lib.Tsize_t(capacityOf(b) - blockHeader)
}

// limit is the heap limit an allocation is checked against. While the
// engine makes its "out of memory" error (JS_ThrowOutOfMemory sets the
// runtime's in_out_of_memory bit), a small reserve past the limit lets it
// make a real InternalError rather than throw null, so code that catches it
// gets an Error.
func (a *arena) limit(s *lib.TJSMallocState) lib.Tsize_t {
	if a.rt != 0 && (*lib.TJSRuntime)(cPointer(a.rt)).F__ccgo1256&inOutOfMemory != 0 && s.Fmalloc_limit < ^lib.Tsize_t(0)-oomReserve {
		return s.Fmalloc_limit + oomReserve
	}
	return s.Fmalloc_limit
}

const (
	inOutOfMemory = 0xff00 // JSRuntime.in_out_of_memory, a bit field in F__ccgo1256
	oomReserve    = 64 << 10
)

// allocationFailed records that the engine ran out of memory.
func (a *arena) allocationFailed() { a.failed = true }

// arenaMallocFunctions is the allocator table a runtime is created with. It
// is immutable after initialization: the engine copies it into the runtime.
var arenaMallocFunctions = lib.TJSMallocFunctions{
	Fjs_malloc:             funcAddr(arenaMalloc),
	Fjs_free:               funcAddr(arenaFree),
	Fjs_realloc:            funcAddr(arenaRealloc),
	Fjs_malloc_usable_size: funcAddr(arenaUsableSize),
}

// arenas recycles the regions of closed VMs: a recycled region has its first
// pages mapped in already, which spares a fresh VM most of its page faults.
// Like the pool of machines it is process-wide on purpose: it holds only
// empty, interchangeable regions.
var arenas = arenaPool{free: make(chan *arena, 16)}

type arenaPool struct{ free chan *arena }

// regionSize is the address space reserved for a heap limit.
func regionSize(memoryLimit int64) int { return int(memoryLimit)*arenaHeadroom + arenaSlack }

// get returns an empty arena for a heap of up to memoryLimit bytes.
func (p *arenaPool) get(memoryLimit int64) (*arena, error) {
	need := regionSize(memoryLimit)
	select {
	case a := <-p.free:
		if a.region.size() >= int(memoryLimit)+arenaSlack {
			return a, nil
		}
		a.region.unmap()
	default:
	}
	r, err := reserveRegion(need)
	if err != nil {
		// Where the system counts reserved address space against memory
		// (strict overcommit), ask for no fragmentation headroom.
		if r, err = reserveRegion(int(memoryLimit) + arenaSlack); err != nil {
			return nil, err
		}
	}
	return &arena{region: r, top: r.base}, nil
}

// put takes back the arena of a closed VM; a revoked one is unmapped.
func (p *arenaPool) put(a *arena) {
	if a.revoked.Load() {
		a.region.unmap()
		return
	}
	a.reset()
	select {
	case p.free <- a:
	default:
		a.region.unmap()
	}
}
