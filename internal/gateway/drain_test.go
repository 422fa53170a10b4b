package gateway_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/wire"
)

func getStatus(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// A draining replica: /readyz says so at once while /healthz stays live and
// requests are still served; once admission stops, a new MCP request gets
// 503 "draining" with Retry-After before anything of it runs, and an
// execution admitted before runs to its answer.
func TestDrainReadinessThenRefusal(t *testing.T) {
	g := gatewaytest.Start(t, gateway.Options{})
	if st, body := getStatus(t, g.URL+"/readyz"); st != http.StatusOK || !strings.Contains(body, `"ready"`) {
		t.Fatalf("/readyz before: %d %s", st, body)
	}
	s := g.Connect(t, g.Key, false)
	g.Service.BeginDrain()
	if st, body := getStatus(t, g.URL+"/readyz"); st != http.StatusServiceUnavailable || !strings.Contains(body, `"error":"draining"`) {
		t.Fatalf("/readyz draining: %d %s", st, body)
	}
	if st, _ := getStatus(t, g.URL+"/healthz"); st != http.StatusOK {
		t.Fatalf("/healthz while draining: %d", st)
	}
	// Not ready, still serving: a balancer may not have noticed yet.
	if a := gatewaytest.Execute(t, s, wire.ExecuteRequest{Code: `return await mcp.math.add({a: 1, b: 2})`}); a.Status != wire.StatusSuccess {
		t.Fatalf("execute while not ready: %+v", a)
	}

	g.Service.StopAdmitting()
	resp, body := g.PostMCP(t, g.Key, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	var refusal struct {
		Error        string `json:"error"`
		RetryAfterMS int64  `json:"retry_after_ms"`
	}
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "1" ||
		json.Unmarshal(body, &refusal) != nil || refusal.Error != "draining" || refusal.RetryAfterMS != 1000 {
		t.Fatalf("MCP request after admission stopped: %d %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	// Nothing is in flight: the wait ends at once.
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if left := g.Service.WaitIdle(ctx); left != 0 {
		t.Fatalf("%d requests left in flight", left)
	}
}
