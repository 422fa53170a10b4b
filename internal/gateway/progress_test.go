package gateway_test

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/wire"
)

// A gateway run with a progress token sends one notification per finished
// call to the session that asked, with the plan's call count and the tool.
// (Here over an in-memory session; gatewayclient's tests see the same over
// the HTTP endpoint, relayed by the package.)
func TestGatewayRunReportsProgress(t *testing.T) {
	g := startWithFixture(t)
	var mu sync.Mutex
	var got []string
	ct, st := mcp.NewInMemoryTransports()
	ss, err := g.Service.NewMCPServer().Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	s, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			p := req.Params
			mu.Lock()
			defer mu.Unlock()
			got = append(got, fmt.Sprintf("%v %g/%g %s", p.ProgressToken, p.Progress, p.Total, p.Message))
		}}).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	params := &mcp.CallToolParams{Name: "execute", Arguments: wire.ExecuteRequest{
		Code: `const n = await mcp.math.add({a: 1, b: 2}); return await mcp.math.add({a: n, b: 3})`}}
	params.SetProgressToken(7)
	res, err := s.CallTool(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	if a := gatewaytest.DecodeAnswer(t, res); a.Status != wire.StatusSuccess || string(a.Result) != "6" {
		t.Fatalf("%+v", a)
	}
	// The answer says how many notifications went before it, for a relay.
	if n := res.Meta[wire.ProgressMeta]; n != float64(2) {
		t.Fatalf("%s = %v, want 2", wire.ProgressMeta, n)
	}
	want := []string{"7 1/2 math:add", "7 2/2 math:add"}
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		cur := append([]string(nil), got...)
		mu.Unlock()
		if reflect.DeepEqual(cur, want) {
			break
		}
		if len(cur) > len(want) || time.Now().After(deadline) {
			t.Fatalf("progress %q, want %q", cur, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
	params.Meta = nil // no token: no progress, nothing counted
	res, err = s.CallTool(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := res.Meta[wire.ProgressMeta]; ok || res.IsError {
		t.Fatalf("without a token: %+v", res)
	}
	alive(t, s)
}

// Over HTTP, a call without a progress token is answered as plain JSON; one
// with a token gets an event stream that carries its progress ahead of the
// answer.
func TestAnswerIsPlainJSONWithoutProgress(t *testing.T) {
	g := startWithFixture(t)
	post := func(meta, code string) (string, string) {
		t.Helper()
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + meta +
			`"name":"execute","arguments":{"code":` + strconv.Quote(code) + `}}}`
		resp, out := g.PostMCP(t, g.Key, body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%d %s", resp.StatusCode, out)
		}
		return resp.Header.Get("Content-Type"), string(out)
	}
	const code = `const n = await mcp.math.add({a: 1, b: 2}); return await mcp.math.add({a: n, b: 3})`
	ct, body := post("", code)
	if ct != "application/json" || !strings.Contains(body, `\"result\":6`) {
		t.Fatalf("without a token: %s %s", ct, body)
	}
	ct, body = post(`"_meta":{"progressToken":"p1"},`, code)
	if ct != "text/event-stream" || strings.Count(body, "notifications/progress") != 2 || !strings.Contains(body, `\"result\":6`) {
		t.Fatalf("with a token: %s %s", ct, body)
	}
	// A string in the code is escaped JSON: it cannot pass for the key.
	ct, _ = post("", `const k = "progressToken"; `+code)
	if ct != "application/json" {
		t.Fatalf("code naming the token: %s", ct)
	}
}
