package workspace

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/testfixture"
	"github.com/pml-go/pml/internal/upstream"
)

// remoteEnv is a package with the fixture server as its local "fx", talking
// over HTTP to a real gateway that hosts the fixture server as "slow".
func remoteEnv(t *testing.T) *Workspace {
	t.Helper()
	g := gatewaytest.Start(t, gateway.Options{Config: gateway.FileConfig{Servers: map[string]gateway.ServerEntry{
		"slow": {ServerConfig: upstream.ServerConfig{Command: testfixture.BuildServer(t)}, Hosted: true, Description: "fixture"},
	}}})
	ws := trustWorkspace(t, `{"allow": ["*"]}`, "")
	return openRemote(t, ws, g.URL, g.Key)
}

// The AI client's progress token reaches a run wherever it runs: a
// server-only run's notifications come from the gateway, relayed by the
// package; a hybrid run counts its own calls, the gateway's among them,
// once each.
func TestRemoteRunsReportProgressOnce(t *testing.T) {
	p := remoteEnv(t)
	cs, log := connectPackage(t, p)
	ctx := context.Background()

	a, err := callExecute(ctx, t, cs, `const n = await mcp.math.add({a: 1, b: 2}); return await mcp.slow.echo({text: "n=" + n})`, "srv")
	if err != nil {
		t.Fatal(err)
	}
	wantResult(t, a, `"n=3"`)
	if a.ExecutedLocally == nil || *a.ExecutedLocally {
		t.Fatalf("a server-only run ran here: %+v", a)
	}
	want := []string{"srv 1/2 math:add", "srv 2/2 slow:echo"}
	if got := waitProgress(t, log, 2); !reflect.DeepEqual(got, want) {
		t.Fatalf("server run progress %q, want %q", got, want)
	}

	a, err = callExecute(ctx, t, cs, `await mcp.fx.echo({text: "a"}); const s = await mcp.math.add({a: 1, b: 1}); return await mcp.slow.echo({text: "s=" + s})`, "hyb")
	if err != nil {
		t.Fatal(err)
	}
	wantResult(t, a, `"s=2"`)
	if a.ExecutedLocally == nil || !*a.ExecutedLocally {
		t.Fatalf("a hybrid run did not run here: %+v", a)
	}
	want = append(want, "hyb 1/3 fx:echo", "hyb 2/3 math:add", "hyb 3/3 slow:echo")
	if got := waitProgress(t, log, 5); !reflect.DeepEqual(got, want) {
		t.Fatalf("hybrid run progress %q, want %q", got, want)
	}
	time.Sleep(100 * time.Millisecond) // a doubled notification would be in flight now
	if got := log.all(); len(got) != 5 {
		t.Fatalf("progress counted twice: %q", got)
	}
}

// Cancelling a hybrid run while the gateway runs one of its calls stops
// that call on the gateway's upstream server too, and the local call after
// the cancel point never starts.
func TestHybridCancelReachesGatewayCall(t *testing.T) {
	p := remoteEnv(t)
	cs, log := connectPackage(t, p)
	cancelMidSleep(t, cs, log, "slow")
}
