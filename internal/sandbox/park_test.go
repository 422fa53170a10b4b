package sandbox

import (
	"context"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/pmlerr"
)

// parkLimits put the heap away 1 ms into any wait on tools.
func parkLimits() Limits {
	lim := testLimits()
	lim.parkAfter = time.Millisecond
	return lim
}

// Code that waits on slow calls, alone (on the VM goroutine) and several at
// once (on workers), has its heap put away and written back each time, and
// goes on with all its state.
func TestParkedHeapComesBack(t *testing.T) {
	tt := &testTools{}
	res, err := Run(context.Background(), fn(`
		const big = []; for (let i = 0; i < 3000; i++) big.push({i, s: "v" + i});
		const m = new Map([["k", [1, 2, 3]]]);
		let out = [];
		for (let round = 0; round < 3; round++) {
			out.push(await mcp.test.sleep({ms: 5}));
			const both = await Promise.all([mcp.test.sleep({ms: 5}), mcp.test.echo({round})]);
			out.push(both[1].round);
		}
		return [out.join(","), big[2999].s, m.get("k").length, big.length];`), nil, tt.call, parkLimits())
	if err != nil {
		t.Fatal(err)
	}
	if want := `["slept,0,slept,1,slept,2","v2999",3,3000]`; string(res.Value) != want {
		t.Fatalf("got %s, want %s", res.Value, want)
	}
}

// A call that outlives the RPC timeout with its heap put away still ends in
// RPC_TIMEOUT, the goroutine taking over writing the heap back, and the
// code goes on.
func TestParkedHeapRPCTimeout(t *testing.T) {
	tt := &testTools{}
	lim := parkLimits()
	lim.RPCTimeout = 50 * time.Millisecond
	res, err := Run(context.Background(), fn(`
		const keep = {a: [1, 2, 3]};
		try { await mcp.test.hang({}) } catch (e) { return [e.code, keep.a.length] }`), nil, tt.call, lim)
	if err != nil {
		t.Fatal(err)
	}
	if want := `["RPC_TIMEOUT",3]`; string(res.Value) != want {
		t.Fatalf("got %s, want %s", res.Value, want)
	}
}

// The run's deadline reaches code whose heap is put away.
func TestParkedHeapDeadline(t *testing.T) {
	tt := &testTools{}
	lim := parkLimits()
	lim.Timeout = 100 * time.Millisecond
	_, err := Run(context.Background(), fn(`await Promise.all([mcp.test.sleep({ms: 5000}), mcp.test.sleep({ms: 5000})])`), nil, tt.call, lim)
	if pe, ok := pmlerr.As(err); !ok || pe.Code != pmlerr.ExecutionTimeout {
		t.Fatalf("got %v, want EXECUTION_TIMEOUT", err)
	}
}
