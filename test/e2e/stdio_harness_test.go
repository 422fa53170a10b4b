package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/wire"
)

// callTimeout bounds every request a test makes: a hang fails the test
// instead of eating the suite's time budget.
const callTimeout = 30 * time.Second

// lockedBuffer collects a child's stderr; the exec package writes to it
// from its own goroutine.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// pmlEnv is the test process's environment without any PML_ setting of the
// machine running the tests, plus extra.
func pmlEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PML_") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// gatewayEnv points a package at g.
func gatewayEnv(g *liveGateway) []string {
	return []string{"PML_CLOUD_URL=" + g.URL, "PML_API_KEY=" + g.Key}
}

// stdioPML is a running `pml stdio` driven by a Go SDK client over
// mcp.CommandTransport, as an AI client would start it.
type stdioPML struct {
	cmd     *exec.Cmd
	session *mcp.ClientSession
	stderr  *lockedBuffer
}

// startStdio spawns `pml stdio` (with args, e.g. -v) for workspace ws.
func startStdio(t testing.TB, ws string, env []string, args ...string) *stdioPML {
	t.Helper()
	cmd := exec.Command(pmlBinary(t), append([]string{"stdio"}, args...)...)
	cmd.Env = pmlEnv(append([]string{"PML_WORKSPACE=" + ws}, env...)...)
	cmd.Dir = ws
	p := &stdioPML{cmd: cmd, stderr: &lockedBuffer{}}
	cmd.Stderr = p.stderr
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "workspace-e2e", Version: "0"}, nil)
	s, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, nil)
	if err != nil {
		t.Fatalf("connecting to pml stdio: %v\nstderr:\n%s", err, p.stderr)
	}
	p.session = s
	t.Cleanup(func() {
		_ = s.Close()
		if t.Failed() {
			t.Logf("pml stdio stderr:\n%s", p.stderr)
		}
	})
	return p
}

func (p *stdioPML) execute(t testing.TB, code string) wire.Answer {
	t.Helper()
	return p.executeReq(t, wire.ExecuteRequest{Code: code})
}

func (p *stdioPML) executeReq(t testing.TB, req wire.ExecuteRequest) wire.Answer {
	t.Helper()
	return callExecute(t, p.session, req)
}

// callExecute calls a package's execute tool over any MCP session.
func callExecute(t testing.TB, s *mcp.ClientSession, req wire.ExecuteRequest) wire.Answer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "execute", Arguments: req})
	if err != nil {
		t.Fatalf("execute: %v", err)
	}
	return gatewaytest.DecodeAnswer(t, res)
}

// discover calls the package's discover tool.
func (p *stdioPML) discover(t testing.TB, req wire.DiscoverRequest) wire.DiscoverAnswer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	res, err := p.session.CallTool(ctx, &mcp.CallToolParams{Name: "discover", Arguments: req})
	if err != nil {
		t.Fatalf("discover: %v", err)
	}
	if res.IsError || len(res.Content) != 1 {
		t.Fatalf("discover failed: %+v", res.Content)
	}
	var out wire.DiscoverAnswer
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func discoverAll() wire.DiscoverRequest { return wire.DiscoverRequest{Limit: 1000} }

// wantSuccess checks a successful answer and decodes its result into v (if non-nil).
func wantSuccess(t testing.TB, a wire.Answer, v any) {
	t.Helper()
	if a.Status != wire.StatusSuccess {
		t.Fatalf("want success, got %s %s: %s", a.Status, a.ErrorCode, a.Error)
	}
	if v != nil {
		if err := json.Unmarshal(a.Result, v); err != nil {
			t.Fatalf("result %s: %v", a.Result, err)
		}
	}
}

// wantLocal checks the full local-run answer of the issue: executed_locally,
// workflow and trace ids, tools used and duration.
func wantLocal(t testing.TB, a wire.Answer, v any) {
	t.Helper()
	wantSuccess(t, a, v)
	if a.ExecutedLocally == nil || !*a.ExecutedLocally || a.WorkflowID == "" || a.TraceID == "" || a.DurationMS == nil || a.ToolsUsed.IsZero() {
		t.Fatalf("local-run fields missing: %+v", a)
	}
}

func wantError(t testing.TB, a wire.Answer, code pmlerr.Code, contains ...string) {
	t.Helper()
	if a.Status != wire.StatusError || a.ErrorCode != code {
		t.Fatalf("want error %s, got %s %s: %s", code, a.Status, a.ErrorCode, a.Error)
	}
	for _, s := range contains {
		if !strings.Contains(a.Error, s) {
			t.Fatalf("error %q does not mention %q", a.Error, s)
		}
	}
}
