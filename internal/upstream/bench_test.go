package upstream_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/pml-go/pml/internal/testfixture"
	"github.com/pml-go/pml/internal/upstream"
)

func benchmarkCall(b *testing.B, cfg upstream.ServerConfig) {
	p := upstream.NewPool(upstream.Options{})
	defer p.Close()
	s := p.Add(cfg)
	ctx := context.Background()
	args := json.RawMessage(`{"text":"hello"}`)
	if _, err := s.Call(ctx, "echo", args); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Call(ctx, "echo", args); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCallStdio is one tools/call round trip to a running stdio server.
func BenchmarkCallStdio(b *testing.B) {
	benchmarkCall(b, upstream.ServerConfig{Name: "fx", Command: testfixture.BuildServer(b)})
}

// BenchmarkCallStdioDirect is the same round trip to a server negotiating
// 2025-11-25, which the package calls without the SDK's client (callDirect).
func BenchmarkCallStdioDirect(b *testing.B) {
	benchmarkCall(b, upstream.ServerConfig{Name: "fx", Command: testfixture.BuildServer(b), Args: []string{"-protocol", "2025-11-25"}})
}

// BenchmarkCallHTTP is one tools/call round trip to a Streamable HTTP server.
func BenchmarkCallHTTP(b *testing.B) {
	srv := testfixture.StartHTTPServer(b, testfixture.BuildServer(b))
	benchmarkCall(b, upstream.ServerConfig{Name: "fx", URL: srv.URL})
}
