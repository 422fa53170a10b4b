//go:build linux

package e2e

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/testfixture"
	"github.com/pml-go/pml/internal/wire"
)

// BenchmarkHybridOverhead: an AI client -> pml stdio -> gateway on loopback
// -> execute_locally -> a local stdio MCP server tool -> result, against the
// same client calling that tool on that server directly. The two are
// interleaved so machine noise hits both alike; added-p50-ms is the figure
// to watch (target <= 3 ms).
func BenchmarkHybridOverhead(b *testing.B) {
	g := startGateway(b, gateway.Options{})
	bin := testfixture.BuildServer(b)
	p := startStdio(b, testfixture.Workspace(b, map[string]any{"fx": map[string]any{"command": bin}}), gatewayEnv(g))
	direct, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil).
		Connect(context.Background(), &mcp.CommandTransport{Command: exec.Command(bin)}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer direct.Close()
	ctx := context.Background()
	req := wire.ExecuteRequest{Code: `return await mcp.fx.echo({text: "hi"})`}
	callDirect := func() {
		res, err := direct.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
		if err != nil || res.IsError {
			b.Fatalf("direct call: %v %+v", err, res)
		}
	}
	callHybrid := func() {
		if a := p.executeReq(b, req); a.Status != wire.StatusSuccess || string(a.Result) != `"hi"` {
			b.Fatalf("hybrid call: %+v", a)
		}
	}
	for range 20 { // start the server, fill caches and connection pools
		callDirect()
		callHybrid()
	}
	var hybrid, plain []time.Duration
	for b.Loop() {
		start := time.Now()
		callHybrid()
		mid := time.Now()
		callDirect()
		hybrid, plain = append(hybrid, mid.Sub(start)), append(plain, time.Since(mid))
	}
	b.ReportMetric(testfixture.MedianMS(hybrid), "hybrid-p50-ms")
	b.ReportMetric(testfixture.MedianMS(plain), "direct-p50-ms")
	b.ReportMetric(testfixture.MedianMS(hybrid)-testfixture.MedianMS(plain), "added-p50-ms")
}
