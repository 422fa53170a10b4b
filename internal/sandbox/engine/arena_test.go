package engine

import (
	"math/rand/v2"
	"sort"
	"testing"
	"unsafe"
)

// TestArenaBlocks allocates, grows and frees blocks at random and checks
// that live blocks never overlap, stay inside the region, keep their
// contents when they grow, and come back from the free lists.
func TestArenaBlocks(t *testing.T) {
	a, err := arenas.get(4 << 20)
	if err != nil {
		t.Fatal(err)
	}
	defer arenas.put(a)
	type block struct {
		p, n uintptr
		fill byte
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var live []block
	bytesAt := func(b block) []byte { return unsafe.Slice((*byte)(cPointer(b.p)), b.n) }
	check := func(b block) {
		for i, c := range bytesAt(b) {
			if c != b.fill {
				t.Fatalf("block %#x of %d: byte %d is %d, want %d", b.p, b.n, i, c, b.fill)
			}
		}
	}
	size := func() uintptr {
		if rng.IntN(10) == 0 {
			return uintptr(rng.IntN(200 << 10))
		}
		return uintptr(1 + rng.IntN(600))
	}
	for i := range 20000 {
		switch op := rng.IntN(3); {
		case op == 0 || len(live) == 0:
			n := size()
			p := a.alloc(n)
			if p == 0 {
				continue // the region is full: fine, nothing to check
			}
			if capacityOf(p)-blockHeader < n || p%16 != 0 {
				t.Fatalf("alloc(%d) = %#x with capacity %d", n, p, capacityOf(p))
			}
			b := block{p, n, byte(i)}
			for j := range bytesAt(b) {
				bytesAt(b)[j] = b.fill
			}
			live = append(live, b)
		case op == 1:
			k := rng.IntN(len(live))
			check(live[k])
			a.release(live[k].p)
			live = append(live[:k], live[k+1:]...)
		default:
			k := rng.IntN(len(live))
			b := live[k]
			check(b)
			n := b.n + size()
			p := a.grow(b.p, n)
			if p == 0 {
				continue
			}
			grown := block{p, b.n, b.fill}
			check(grown) // the old contents moved along
			grown.n = n
			for j := range bytesAt(grown) {
				bytesAt(grown)[j] = grown.fill
			}
			live[k] = grown
		}
	}
	sort.Slice(live, func(i, j int) bool { return live[i].p < live[j].p })
	for i, b := range live {
		check(b)
		if b.p < a.region.base || b.p+b.n > a.region.end() {
			t.Fatalf("block %#x of %d is outside the region", b.p, b.n)
		}
		if i > 0 && live[i-1].p+capacityOf(live[i-1].p)-blockHeader > b.p-blockHeader {
			t.Fatalf("blocks %#x and %#x overlap", live[i-1].p, b.p)
		}
	}
}

func TestSizeClasses(t *testing.T) {
	prev := -1
	for total := uintptr(blockHeader + minPayload); total < 64<<20; total += 1 + total/64 {
		c, size := classOf(total)
		if size < total || c < prev || c >= numClasses {
			t.Fatalf("classOf(%d) = %d, %d", total, c, size)
		}
		if c2, size2 := classOf(size); c2 != c || size2 != size {
			t.Fatalf("a block of class %d (%d bytes) maps back to %d (%d)", c, size, c2, size2)
		}
		if waste := size - total; waste > total/4+16 {
			t.Fatalf("classOf(%d) wastes %d bytes", total, waste)
		}
		prev = c
	}
}
