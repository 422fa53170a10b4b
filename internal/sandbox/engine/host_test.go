package engine

import (
	"math"
	"testing"
)

// A function InstallHostOp defines calls the host function with its op and
// undefined arguments, and hands back what it returns; op 0 (the generic
// host function's) and ops beyond int32 are refused.
func TestInstallHostOp(t *testing.T) {
	vm := newVM(t)
	var ops []int
	err := vm.InstallHost("__host", func(op int, a, b Value) Value {
		ops = append(ops, op)
		if op == 9 {
			return Float(0.25)
		}
		return Float(math.Pi * float64(op))
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range []int{0, 1 << 40} {
		if err := vm.InstallHostOp("bad", op); err == nil {
			t.Fatalf("op %d accepted", op)
		}
	}
	if err := vm.InstallHostOp("quarter", 9); err != nil {
		t.Fatal(err)
	}
	got, err := evalText(vm, `String([quarter(), quarter(1, 2, 3), __host(2, 0, 0), typeof bad])`)
	if err != nil {
		t.Fatal(err)
	}
	if want := "0.25,0.25,6.283185307179586,undefined"; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	if len(ops) != 3 || ops[0] != 9 || ops[1] != 9 || ops[2] != 2 {
		t.Fatalf("ops %v", ops)
	}
}
