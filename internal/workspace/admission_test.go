package workspace

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/admission"
	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/gatewayclient"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/sandbox"
	"github.com/pml-go/pml/internal/testfixture"
	"github.com/pml-go/pml/internal/upstream"
	"github.com/pml-go/pml/internal/wire"
)

const holdCode = `return await mcp.gate.hold({})`

// gateWorkspace is a workspace whose .pml.json allows everything and
// configures the gate as a local MCP server over HTTP: code calling it runs
// in the package.
func gateWorkspace(t *testing.T, gate *testfixture.Gate) string {
	t.Helper()
	ws := t.TempDir()
	cfg, _ := json.Marshal(map[string]any{"version": "1", "permissions": map[string]any{"allow": []string{"*"}},
		"mcpServers": map[string]any{"gate": map[string]any{"type": "http", "url": gate.URL}}})
	if err := os.WriteFile(filepath.Join(ws, ConfigFile), cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	return ws
}

func executeAsync(p *Workspace, code string) <-chan wire.Answer {
	out := make(chan wire.Answer, 1)
	go func() { out <- p.Execute(context.Background(), wire.ExecuteRequest{Code: code}) }()
	return out
}

func wantOverloaded(t *testing.T, a wire.Answer, retryMS int64) {
	t.Helper()
	if a.Status != wire.StatusError || a.ErrorCode != pmlerr.Overloaded {
		t.Fatalf("want OVERLOADED, got %s %s: %s", a.Status, a.ErrorCode, a.Error)
	}
	if ms, ok := a.Details["retry_after_ms"].(int64); !ok || ms != retryMS {
		t.Fatalf("retry_after_ms %#v, want %d", a.Details["retry_after_ms"], retryMS)
	}
}

func wantResult(t *testing.T, a wire.Answer, result string) {
	t.Helper()
	if a.Status != wire.StatusSuccess || string(a.Result) != result {
		t.Fatalf("want success %s, got %s %s: %s %s", result, a.Status, a.ErrorCode, a.Error, a.Result)
	}
}

// Local runs are admitted like the gateway's executions. In local mode one
// controller admits both the package's runs and the in-process gateway's,
// so server-only code waits for the same places.
func TestLocalRunsAreAdmitted(t *testing.T) {
	gate := testfixture.StartGate(t)
	ctrl := admission.New(admission.Limits{MaxExecutions: 2, MaxExecutionsPerTenant: -1, MaxQueue: 1, QueueWait: 2 * time.Second, MemoryCeiling: -1}, sandbox.Limits{})
	svc, closer, err := gateway.Open(context.Background(), gateway.Options{DB: filepath.Join(t.TempDir(), "g.db"), Admission: ctrl})
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(Options{Workspace: gateWorkspace(t, gate), Gateway: &gatewayclient.InProcess{Service: svc, Closer: closer.Close}, Admission: ctrl})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })

	parked := []<-chan wire.Answer{executeAsync(p, holdCode), executeAsync(p, holdCode)}
	testfixture.WaitFor(t, "two local runs at the gate", func() bool { return gate.Waiting() == 2 })
	if s := ctrl.Stats(); s.Admitted != 2 || s.Running != 0 {
		t.Fatalf("stats with two runs parked: %+v", s)
	}
	// Server-only code, run by the in-process gateway, queues for a place...
	queued := executeAsync(p, "return await mcp.math.add({a: 1, b: 2})")
	testfixture.WaitFor(t, "a queued request", func() bool { return ctrl.Stats().Queued == 1 })
	// ...a local run finds the queue full and is refused at once...
	wantOverloaded(t, p.Execute(context.Background(), wire.ExecuteRequest{Code: holdCode}), 2000)
	// ...and the queued one gets no place in time.
	wantOverloaded(t, <-queued, 2000)

	gate.Open()
	for _, c := range parked {
		wantResult(t, <-c, `"released"`)
	}
	wantResult(t, p.Execute(context.Background(), wire.ExecuteRequest{Code: holdCode}), `"released"`)
	wantResult(t, p.Execute(context.Background(), wire.ExecuteRequest{Code: "return await mcp.math.add({a: 1, b: 2})"}), "3")
	if s := ctrl.Stats(); s.Admitted != 0 || s.Queued != 0 || s.Rejected[admission.ReasonQueueFull] != 1 || s.Rejected[admission.ReasonWait] != 1 {
		t.Fatalf("final stats %+v", s)
	}
}

// A remote gateway's 429 reaches the AI client as OVERLOADED with
// retry_after_ms: not as an unreachable gateway (which would run
// client-only code offline), and the connection keeps serving.
func TestGateway429IsOverloaded(t *testing.T) {
	gate := testfixture.StartGate(t)
	g := gatewaytest.Start(t, gateway.Options{
		Config: gateway.FileConfig{Servers: map[string]gateway.ServerEntry{
			"gate": {ServerConfig: upstream.ServerConfig{Type: upstream.TypeHTTP, URL: gate.URL}, Hosted: true},
		}},
		Admission: admission.New(admission.Limits{MaxExecutions: 1, MaxExecutionsPerTenant: 1, MaxQueue: -1, QueueWait: 3 * time.Second, MemoryCeiling: -1}, sandbox.Limits{}),
	})
	p, err := New(Options{Workspace: gateWorkspace(t, testfixture.StartGate(t)), Gateway: gatewayclient.NewRemote(g.URL, g.Key, "")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	// Warm the package's session, then take the gateway's one place.
	wantResult(t, p.Execute(context.Background(), wire.ExecuteRequest{Code: "return 1"}), "1")
	s := g.Connect(t, g.Key, false)
	held := make(chan error, 1)
	go func() {
		_, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "execute", Arguments: wire.ExecuteRequest{Code: holdCode}})
		held <- err
	}()
	testfixture.WaitFor(t, "the gateway's place taken", func() bool { return gate.Waiting() == 1 })

	// Server-only code: the gateway sheds the request.
	wantOverloaded(t, p.Execute(context.Background(), wire.ExecuteRequest{Code: "return await mcp.math.add({a: 1, b: 2})"}), 3000)
	gate.Open()
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	wantResult(t, p.Execute(context.Background(), wire.ExecuteRequest{Code: "return await mcp.math.add({a: 1, b: 2})"}), "3")
}

func TestAdmissionFromEnv(t *testing.T) {
	t.Setenv("PML_MAX_EXECUTIONS", "12")
	t.Setenv("PML_MAX_RUNNING", "3")
	t.Setenv("PML_MAX_QUEUE", "0")
	t.Setenv("PML_QUEUE_WAIT_MS", "250")
	l, err := admissionFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	got := l.WithDefaults(sandbox.Limits{})
	if got.MaxExecutions != 12 || got.MaxExecutionsPerTenant != 12 || got.MaxRunning != 3 || got.MaxQueue != 0 || got.QueueWait != 250*time.Millisecond {
		t.Fatalf("%s", got)
	}
	for name, bad := range map[string]string{"PML_MAX_EXECUTIONS": "-1", "PML_MAX_RUNNING": "many", "PML_MAX_QUEUE": "-3", "PML_QUEUE_WAIT_MS": "0"} {
		t.Run(name, func(t *testing.T) {
			t.Setenv(name, bad)
			if _, err := admissionFromEnv(); err == nil || !strings.Contains(err.Error(), name) {
				t.Fatalf("%s=%s: %v", name, bad, err)
			}
		})
	}
}
