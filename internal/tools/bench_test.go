package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
)

// BenchmarkMuxCall measures the routing and validation overhead of one
// built-in call: mux lookup, cached schema validation, decode, marshal.
func BenchmarkMuxCall(b *testing.B) {
	m := NewMux()
	m.Register("math", testTable())
	ctx := context.Background()
	args := json.RawMessage(`{"a": 1, "b": 2}`)
	for b.Loop() {
		if _, err := m.Call(ctx, "math:add", args); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRank ranks a catalogue of 500 tools, the size of a gateway with a
// few dozen upstream servers.
func BenchmarkRank(b *testing.B) {
	infos := make([]Info, 0, 500)
	for i := range 500 {
		infos = append(infos, Info{
			ID:          fmt.Sprintf("ns%d:action_%d", i%40, i),
			Description: fmt.Sprintf("Does thing %d with files, records and reports; returns a summary.", i),
		})
	}
	for b.Loop() {
		Rank("read files summary", infos, 10)
	}
}
