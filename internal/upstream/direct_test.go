package upstream_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/upstream"
)

// olderFixture is the fixture server negotiating 2025-11-25, whose tool
// calls the package makes without the SDK's client (callDirect).
func olderFixture(t *testing.T, name string) upstream.ServerConfig {
	return fixture(t, name, "-protocol", "2025-11-25")
}

// A stdio server of an older protocol is called without the SDK's client,
// and every call, result and failure comes out as the SDK's client makes
// it with a server of the newest protocol.
func TestDirectCallsAgreeWithTheSDK(t *testing.T) {
	p, _ := newPool(t, upstream.Options{})
	sdk := p.Add(fixture(t, "fx"))
	direct := p.Add(olderFixture(t, "fy"))
	pidOf(t, sdk)
	pidOf(t, direct)
	if upstream.CallsDirect(sdk) || !upstream.CallsDirect(direct) {
		t.Fatalf("direct calls: newest protocol %v, 2025-11-25 %v; want false, true", upstream.CallsDirect(sdk), upstream.CallsDirect(direct))
	}
	dir := t.TempDir()
	calls := []struct{ tool, args string }{
		{"echo", `{"text":"hello world"}`},
		{"echo", `{"text":" {\"a\": [1, 2]} "}`},
		{"echo", `{"text":"42"}`},
		{"echo", `{"text":"line\nbreak \"quoted\" \u00e9 \u2028"}`},
		{"echo", `{"text":""}`},
		{"echo", "{\n  \"text\": \"pretty\"\n}"},
		{"echo", `null`},
		{"add", `{"a":2,"b":3}`},
		{"add", `{"a": "one", "b": 2}`},
		{"json", `{}`},
		{"multi", `{}`},
		{"fail", `{"message":"disk on fire"}`},
		{"nope", `{}`},
		{"sleep", `{"ms":"soon"}`},
		{"echo", `["x"]`},
		{"count", `{"file":FILE}`}, // side effects run once per call
	}
	for i, c := range calls {
		file := func(server string) json.RawMessage {
			return json.RawMessage(strings.ReplaceAll(c.args, "FILE", quote(filepath.Join(dir, server+strconv.Itoa(i)))))
		}
		want, wantErr := sdk.Call(ctxTimeout(t, 10*time.Second), c.tool, file("fx"))
		got, err := direct.Call(ctxTimeout(t, 10*time.Second), c.tool, file("fy"))
		if string(got) != string(want) || errText(err, "fy") != errText(wantErr, "fx") {
			t.Errorf("%s(%s):\n direct %s %v\n    sdk %s %v", c.tool, c.args, got, err, want, wantErr)
		}
	}
}

// errText is err's code, message and details with the server's name taken
// out, to compare the errors of two servers.
func errText(err error, name string) string {
	if err == nil {
		return ""
	}
	pe, ok := pmlerr.As(err)
	if !ok {
		return "not a pmlerr: " + err.Error()
	}
	details, _ := json.Marshal(pe.Details)
	return strings.ReplaceAll(string(pe.Code)+" "+pe.Message+" "+string(details), name, "NAME")
}

// A direct call past its deadline is RPC_TIMEOUT and leaves the session
// usable; one cancelled reaches the server as notifications/cancelled.
func TestDirectCallDeadlineAndCancel(t *testing.T) {
	p, _ := newPool(t, upstream.Options{})
	s := p.Add(olderFixture(t, "fx"))
	pid := pidOf(t, s)
	_, err := s.Call(ctxTimeout(t, 300*time.Millisecond), "hang", nil)
	wantCode(t, err, pmlerr.RPCTimeout)

	dir := t.TempDir()
	started, cancelled := filepath.Join(dir, "started"), filepath.Join(dir, "cancelled")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if _, err := os.Stat(started); err == nil {
				break
			}
		}
		cancel()
	}()
	_, err = s.Call(ctx, "sleep", json.RawMessage(`{"ms":30000,"started":`+quote(started)+`,"cancelled":`+quote(cancelled)+`}`))
	if err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Fatalf("cancelled call error = %v, want context.Canceled", err)
	}
	eventually(t, 5*time.Second, "the server to see the call cancelled", func() bool {
		_, err := os.Stat(cancelled)
		return err == nil
	})
	if got := pidOf(t, s); got != pid {
		t.Fatalf("server restarted after a timeout and a cancel (pid %d, was %d)", got, pid)
	}
}
