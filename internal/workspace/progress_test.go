package workspace

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/testfixture"
	"github.com/pml-go/pml/internal/wire"
)

// progressLog collects the progress notifications a client receives, as
// "token done/total message".
type progressLog struct {
	mu   sync.Mutex
	got  []string
	seen chan struct{}
}

func (l *progressLog) handle(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	p := req.Params
	l.mu.Lock()
	l.got = append(l.got, fmt.Sprintf("%v %g/%g %s", p.ProgressToken, p.Progress, p.Total, p.Message))
	l.mu.Unlock()
	select {
	case l.seen <- struct{}{}:
	default:
	}
}

func (l *progressLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.got...)
}

// connectPackage is an MCP client of the package's own server that logs the
// progress it is sent.
func connectPackage(t *testing.T, p *Workspace) (*mcp.ClientSession, *progressLog) {
	t.Helper()
	log := &progressLog{seen: make(chan struct{}, 16)}
	return connectInMemory(t, p.NewMCPServer(), &mcp.ClientOptions{ProgressNotificationHandler: log.handle}), log
}

func callExecute(ctx context.Context, t *testing.T, cs *mcp.ClientSession, code string, token any) (wire.Answer, error) {
	t.Helper()
	params := &mcp.CallToolParams{Name: "execute", Arguments: wire.ExecuteRequest{Code: code}}
	if token != nil {
		params.SetProgressToken(token)
	}
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		return wire.Answer{}, err
	}
	return decodeResult(t, res), nil
}

// waitProgress waits until log holds n notifications: they travel apart
// from the answer, which may arrive first.
func waitProgress(t *testing.T, log *progressLog, n int) []string {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for len(log.all()) < n {
		select {
		case <-log.seen:
		case <-deadline:
			t.Fatalf("progress: %q, want %d notifications", log.all(), n)
		}
	}
	return log.all()
}

const fxConfig = `{"permissions": {"allow": ["*"]}, "mcpServers": {"fx": {"command": "%[1]s"}}}`

// A local run with a progress token sends one notification per finished
// call, with the plan's call count and the tool; without a token, none.
func TestLocalRunReportsProgress(t *testing.T) {
	e := newApprovalEnv(t, fxConfig, nil)
	cs, log := connectPackage(t, e.pkg)
	ctx := context.Background()
	a, err := callExecute(ctx, t, cs, `await mcp.fx.echo({text: "a"}); return (await mcp.fx.add({a: 1, b: 2})).sum`, "tok-1")
	if err != nil {
		t.Fatal(err)
	}
	wantResult(t, a, "3")
	want := []string{"tok-1 1/2 fx:echo", "tok-1 2/2 fx:add"}
	if got := waitProgress(t, log, 2); !reflect.DeepEqual(got, want) {
		t.Fatalf("progress %q, want %q", got, want)
	}
	if a, err := callExecute(ctx, t, cs, `return await mcp.fx.echo({text: "b"})`, nil); err != nil || a.Status != wire.StatusSuccess {
		t.Fatalf("no token: %+v %v", a, err)
	}
	time.Sleep(100 * time.Millisecond) // a stray notification would be in flight now
	if got := log.all(); len(got) != 2 {
		t.Fatalf("a request without a token got progress: %q", got)
	}
}

// A client cancelling an execute stops the local run where it is: the call
// in flight ends (its server is told) and nothing after it starts, even under a try/catch; the
// next request is served.
func TestLocalRunStopsWhenCancelled(t *testing.T) {
	e := newApprovalEnv(t, fxConfig, nil)
	cs, log := connectPackage(t, e.pkg)
	cancelMidSleep(t, cs, log, "fx")
}

// cancelMidSleep runs testfixture.CancelProbe code (echo and count on the
// local fixture server, the sleep on server ns), cancels it once the sleep
// is under way, and checks: the execute ends cancelled, the sleeping server
// is told, the next request is served, the write never happens and no
// progress follows the cancel.
func cancelMidSleep(t *testing.T, cs *mcp.ClientSession, log *progressLog, ns string) {
	t.Helper()
	probe := testfixture.NewCancelProbe(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		_, err := callExecute(ctx, t, cs, probe.Code("fx", ns), "tok-c")
		done <- err
	}()
	waitProgress(t, log, 1) // echo finished
	probe.WaitStarted(t)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call: %v", err)
	}
	probe.WaitCancelled(t)
	a, err := callExecute(context.Background(), t, cs, `return await mcp.fx.echo({text: "next"})`, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantResult(t, a, `"next"`)
	probe.WantNotWritten(t, start)
	if got := log.all(); len(got) != 1 {
		t.Fatalf("progress after the cancel: %q", got)
	}
}
