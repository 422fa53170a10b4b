package engine

import (
	"runtime"
	"testing"
)

// A closed VM's C stack serves the next VM, already grown, unless it grew
// deep or its VM was revoked.
func TestCStacksAreReused(t *testing.T) {
	if tlsBlocks < 0 {
		if runtime.GOOS == "linux" {
			t.Fatal("libc.TLS holds no slice of blocks: a libc upgrade changed it, and C stacks are no longer reused")
		}
		t.Skip("libc's emulated C stack is not a slice of blocks here")
	}
	drain := func() {
		for len(cStacks.free) > 0 {
			(<-cStacks.free).Close()
		}
	}
	drain()
	t.Cleanup(drain)
	run := func(code string) *VM {
		vm, err := New(64 << 20)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := evalText(vm, code); err != nil {
			t.Fatal(err)
		}
		return vm
	}

	vm := run(`function d(n) { return n ? d(n - 1) + 1 : 0 } d(10)`)
	grown, blocks := vm.tls, stackBlocks(vm.tls)
	if blocks == 0 {
		t.Fatal("the C stack holds no blocks after running code")
	}
	vm.Close()
	next := run(`1`)
	if next.tls != grown || stackBlocks(next.tls) < blocks {
		t.Errorf("the next VM got a new C stack (%d blocks), not the closed VM's (%d)", stackBlocks(next.tls), blocks)
	}
	next.Close()

	deep := run(`function d(n) { return n ? d(n - 1) + 1 : 0 } d(1000)`)
	deepStack := deep.tls
	deep.Close()
	for len(cStacks.free) > 0 {
		if s := <-cStacks.free; s == deepStack {
			t.Error("a C stack grown deep was pooled")
		}
	}

	revoked := run(`1`)
	revokedStack := revoked.tls
	revoked.Revoke()
	revoked.Close()
	if len(cStacks.free) > 0 && <-cStacks.free == revokedStack {
		t.Error("a revoked VM's C stack was pooled")
	}
}
