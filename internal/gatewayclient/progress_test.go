package gatewayclient_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/gatewayclient"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/testfixture"
	"github.com/pml-go/pml/internal/upstream"
	"github.com/pml-go/pml/internal/wire"
)

// progressLog is a request's reporter that logs what it is told, as
// "done/total tool".
type progressLog struct {
	mu   sync.Mutex
	got  []string
	seen chan struct{}
}

func newProgressLog() *progressLog { return &progressLog{seen: make(chan struct{}, 64)} }

func (l *progressLog) report(_ context.Context, done, total int, tool string) {
	l.mu.Lock()
	l.got = append(l.got, fmt.Sprintf("%d/%d %s", done, total, tool))
	l.mu.Unlock()
	l.seen <- struct{}{}
}

func (l *progressLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.got...)
}

// startGateway is a real gateway over loopback HTTP hosting the fixture
// server as fx, with the default call timeout (longer than a 3 s sleep).
func startGateway(t *testing.T) (*gatewaytest.Gateway, *gatewayclient.Remote) {
	t.Helper()
	g := gatewaytest.Start(t, gateway.Options{Config: gateway.FileConfig{Servers: map[string]gateway.ServerEntry{
		"fx": {ServerConfig: upstream.ServerConfig{Command: testfixture.BuildServer(t)}, Hosted: true, Description: "fixture"},
	}}})
	r := gatewayclient.NewRemote(g.URL, g.Key, "")
	t.Cleanup(func() { _ = r.Close() })
	return g, r
}

// A gateway run's progress reaches the package's request over HTTP: one
// notification per call, in order, all of them forwarded before Execute
// returns (the answer says how many there were). The same Remote serves
// requests without progress, and a call, which a hybrid run here counts
// itself, reports none.
func TestRemoteRelaysGatewayProgress(t *testing.T) {
	_, r := startGateway(t)
	code := `const n = await mcp.math.add({a: 1, b: 2}); await mcp.fx.echo({text: "x"}); return await mcp.math.add({a: n, b: 3})`
	want := []string{"1/3 math:add", "2/3 fx:echo", "3/3 math:add"}
	// Repeated: the last notification and the answer arrive together, and
	// a relay that dropped a late one would lose it now and then.
	for i := range 20 {
		log := newProgressLog()
		a, err := r.Execute(wire.WithProgress(context.Background(), log.report), wire.ExecuteRequest{Code: code})
		if err != nil || a.Status != wire.StatusSuccess || string(a.Result) != "6" {
			t.Fatalf("run %d: %+v %v", i, a, err)
		}
		if got := log.all(); !reflect.DeepEqual(got, want) {
			t.Fatalf("run %d: progress %q, want %q", i, got, want)
		}
	}

	a, err := r.Execute(context.Background(), wire.ExecuteRequest{Code: code})
	if err != nil || a.Status != wire.StatusSuccess {
		t.Fatalf("without progress: %+v %v", a, err)
	}
	log := newProgressLog()
	out, err := r.Call(wire.WithProgress(context.Background(), log.report), wire.CallRequest{Tool: "math:add", Args: json.RawMessage(`{"a": 2, "b": 2}`)})
	if err != nil || string(out) != "4" {
		t.Fatalf("call: %s %v", out, err)
	}
	time.Sleep(100 * time.Millisecond) // a stray notification would be in flight now
	if got := log.all(); len(got) != 0 {
		t.Fatalf("a call reported progress: %q", got)
	}
}

// Cancelling a remote execute stops the gateway's run where it is: the
// upstream server's call in flight is cancelled (the fixture notes it), the
// call after the cancel point never starts, even under a try/catch, and the
// next request is served. The answer is CANCELLED with the trace id the
// gateway kept the run under (issue 30, item 3). So it is over MCP (an
// execute asking for progress) and over POST /api/v1/execute (one that
// does not).
func TestRemoteCancelStopsGatewayRun(t *testing.T) {
	t.Run("mcp", func(t *testing.T) { cancelStopsGatewayRun(t, true) })
	t.Run("plain", func(t *testing.T) { cancelStopsGatewayRun(t, false) })
}

func cancelStopsGatewayRun(t *testing.T, withProgress bool) {
	g, r := startGateway(t)
	probe := testfixture.NewCancelProbe(t)
	log := newProgressLog()
	ctx := context.Background()
	if withProgress {
		ctx = wire.WithProgress(ctx, log.report)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	start := time.Now()
	type result struct {
		a   wire.Answer
		err error
	}
	done := make(chan result, 1)
	go func() {
		a, err := r.Execute(ctx, wire.ExecuteRequest{Code: probe.Code("fx", "fx")})
		done <- result{a, err}
	}()
	probe.WaitStarted(t)
	cancel()
	res := <-done
	if res.err != nil || res.a.ErrorCode != pmlerr.Cancelled || res.a.TraceID == "" {
		t.Fatalf("cancelled execute: %+v %v", res.a, res.err)
	}
	probe.WaitCancelled(t)
	testfixture.WaitFor(t, "the gateway to keep the cancelled run's trace", func() bool {
		tr, err := g.Service.Store().TraceByID(context.Background(), store.Scope{Org: "acme", Project: "web"}, res.a.TraceID)
		return err == nil && !tr.Success && strings.Contains(string(tr.Body), `"CANCELLED"`)
	})
	a, err := r.Execute(context.Background(), wire.ExecuteRequest{Code: `return await mcp.fx.echo({text: "next"})`})
	if err != nil || a.Status != wire.StatusSuccess || string(a.Result) != `"next"` {
		t.Fatalf("next request: %+v %v", a, err)
	}
	probe.WantNotWritten(t, start)
	// The echo's notification may or may not have been handled before the
	// cancel; nothing after it is sent.
	if got := log.all(); len(got) > 1 {
		t.Fatalf("progress after the cancel: %q", got)
	}
}
