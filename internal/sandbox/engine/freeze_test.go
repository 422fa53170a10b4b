package engine

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

// A frozen heap comes back exactly: code defined before Freeze runs after
// Thaw with all its state, in this VM and in one frozen against another's
// reference.
func TestFreezeThaw(t *testing.T) {
	setup := `var big = []; for (let i = 0; i < 5000; i++) big.push({i, s: "x" + i});
		var m = new Map([["a", 1]]); function f(n) { return big[n].s + m.get("a") }`
	// The first heap frozen in the process is the reference, unless a test
	// froze one before.
	ownReference := heapReference.Load() == nil
	for i := range 3 {
		vm := newVM(t)
		if _, err := evalText(vm, setup); err != nil {
			t.Fatal(err)
		}
		img := vm.Freeze()
		if img.Bytes() >= int(vm.arena.top-vm.arena.region.base) {
			t.Errorf("image of %d bytes for a heap of %d", img.Bytes(), vm.arena.top-vm.arena.region.base)
		}
		// A heap built as the reference was differs from it in a few
		// words, and a page that does not differ costs nothing: about
		// 200 bytes for these 1.1 MB, where a bitmap per page alone was
		// 17 KiB.
		if ownReference && i > 0 && img.Bytes() > 1<<10 {
			t.Errorf("image of %d bytes for a heap built as the reference was", img.Bytes())
		}
		vm.Thaw(img)
		got, err := evalText(vm, `f(4321) + big.length + JSON.stringify([...m])`)
		if err != nil {
			t.Fatal(err)
		}
		if want := `x432115000[["a",1]]`; got != want {
			t.Fatalf("after Thaw: %q, want %q", got, want)
		}
		// The VM keeps allocating and collecting after it was thawed.
		if got, err := evalText(vm, `big = null; let s = ""; for (let i = 0; i < 1000; i++) s += i; s.length`); err != nil || !strings.HasPrefix(got, "2890") {
			t.Fatalf("after Thaw: %q %v", got, err)
		}
	}
}

// BenchmarkFreezeThaw puts away and writes back the heap of a VM with the
// sandbox's bridge that ran a little code, as a parked execution's is.
func BenchmarkFreezeThaw(b *testing.B) {
	src, err := os.ReadFile("../bridge.js")
	if err != nil {
		b.Fatal(err)
	}
	newBridged := func() *VM {
		vm := newVM(b)
		if _, err := evalText(vm, string(src)); err != nil {
			b.Fatal(err)
		}
		return vm
	}
	first := newBridged() // the reference, if no test froze a heap before
	first.Thaw(first.Freeze())
	vm := newBridged()
	if _, err := evalText(vm, `let h = ""; for (let i = 0; i < 20; i++) h += i; h`); err != nil {
		b.Fatal(err)
	}
	var size int
	for b.Loop() {
		img := vm.Freeze()
		size = img.Bytes()
		vm.Thaw(img)
	}
	b.ReportMetric(float64(size)/1024, "image-KiB")
	b.ReportMetric(float64(vm.arena.top-vm.arena.region.base)/1024, "heap-KiB")
}

// A frozen VM holds none of the blocks its emulated C stack grew to, and
// runs on after Thaw.
func TestFreezeReleasesCStack(t *testing.T) {
	vm := newVM(t)
	deep := `function d(n) { return n ? d(n - 1) + 1 : 0 } d(50)`
	if got, err := evalText(vm, deep); err != nil || got != "50" {
		t.Fatalf("%q %v", got, err)
	}
	// libc keeps the blocks in an unexported slice on Linux (a list of
	// pages elsewhere, which this test does not read).
	blocks := func() int {
		v := reflect.ValueOf(vm.tls).Elem().FieldByName("stack")
		if v.Kind() != reflect.Slice {
			t.Skipf("libc's emulated C stack is a %v here", v.Kind())
		}
		return v.Len()
	}
	if blocks() == 0 {
		t.Fatal("the C stack holds no blocks after running code")
	}
	img := vm.Freeze()
	if n := blocks(); n != 0 {
		t.Errorf("a frozen VM holds %d blocks of C stack", n)
	}
	vm.Thaw(img)
	if got, err := evalText(vm, deep); err != nil || got != "50" {
		t.Fatalf("after Thaw: %q %v", got, err)
	}
}
