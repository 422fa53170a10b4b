//go:build linux

package e2e

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/gatewayclient"
	"github.com/pml-go/pml/internal/testfixture"
	"github.com/pml-go/pml/internal/wire"
)

// BenchmarkHybridOverhead: an AI client -> pml stdio -> gateway on loopback
// -> execute_locally -> a local stdio MCP server tool -> result, against the
// same client calling that tool on that server directly. gateway-p50-ms is
// one hop of the hybrid path alone: the package's execute round trip to the
// gateway, answered execute_locally (docs/architecture.md says why it stays).
// The first two are interleaved so machine noise hits them alike (the hop
// after them: interleaved too, it slowed the package's own round trips);
// added-p50-ms
// is the figure to watch (docs/performance.md).
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
	remote := gatewayclient.NewRemote(g.URL, g.Key, b.TempDir())
	callGateway := func() {
		if a, err := remote.Execute(ctx, req); err != nil || a.Status != wire.StatusExecuteLocally {
			b.Fatalf("gateway hop: %v %+v", err, a)
		}
	}
	for range 20 { // start the server, fill caches and connection pools
		callDirect()
		callHybrid()
		callGateway()
	}
	var hybrid, plain, gw []time.Duration
	for b.Loop() {
		t0 := time.Now()
		callHybrid()
		t1 := time.Now()
		callDirect()
		hybrid, plain = append(hybrid, t1.Sub(t0)), append(plain, time.Since(t1))
	}
	for range len(hybrid) {
		t0 := time.Now()
		callGateway()
		gw = append(gw, time.Since(t0))
	}
	b.ReportMetric(testfixture.MedianMS(gw), "gateway-p50-ms")
	b.ReportMetric(testfixture.MedianMS(hybrid), "hybrid-p50-ms")
	b.ReportMetric(testfixture.MedianMS(plain), "direct-p50-ms")
	b.ReportMetric(testfixture.MedianMS(hybrid)-testfixture.MedianMS(plain), "added-p50-ms")
}
