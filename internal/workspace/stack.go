package workspace

// reserveStack grows the calling goroutine's stack, while it is nearly
// empty, to what serving an execute takes, in one cheap copy: the goroutine
// the SDK starts for each request and the one of each local run otherwise
// grow it in several doublings, each copying the frames of the execute path
// (docs/performance.md "What code mode costs over a direct call"; the
// sandbox does the same for its runs).
//
//go:noinline
func reserveStack() {
	var pad [stackReserve]byte
	touch(pad[:])
}

// stackReserve makes the stack 32 KiB.
const stackReserve = 16 << 10

//go:noinline
func touch(b []byte) { b[len(b)-1] = 0 }
