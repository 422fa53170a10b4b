package admission

import (
	"context"
	"encoding/json"
	"testing"
)

// BenchmarkAdmission is what admission adds to an execution with three
// calls: Enter, the running place given back and taken again around each
// call, and Exit; on one goroutine and on all of them at once.
func BenchmarkAdmission(b *testing.B) {
	c := small(Limits{MaxExecutions: 4096, MaxRunning: 8, MaxExecutionsPerTenant: -1})
	tool := func(context.Context, string, json.RawMessage) (json.RawMessage, error) { return nil, nil }
	one := func() {
		ctx, vm, err := c.Enter(context.Background(), "t")
		if err != nil {
			b.Fatal(err)
		}
		call := vm.Wrap(tool)
		for range 3 {
			if _, err := call(ctx, "t:t", nil); err != nil {
				b.Fatal(err)
			}
		}
		vm.Exit()
	}
	b.Run("serial", func(b *testing.B) {
		for b.Loop() {
			one()
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				one()
			}
		})
	})
}
