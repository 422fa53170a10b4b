package mcpdirect

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/afteranswer"
	"github.com/pml-go/pml/internal/stdioconn"
)

// stdioPeer is a client's end of a stdio session served by ServeStdio
// (direct) or by the SDK alone.
type stdioPeer struct {
	t     *testing.T
	in    *io.PipeWriter
	out   *bufio.Reader
	mu    sync.Mutex
	taken []jsonrpc.ID
	done  chan error
}

// testServer is a server of tools that answer in each of the ways a tool
// can, and that wait (block: until ctx ends; gate: until released).
func testServer(gate <-chan struct{}, started chan<- string) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	schema := json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`)
	srv.AddTool(&mcp.Tool{Name: "echo", InputSchema: schema}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in struct {
			Text *string `json:"text"`
		}
		if err := json.Unmarshal(req.Params.Arguments, &in); err != nil || in.Text == nil {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "text is required"}}}, nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: *in.Text + " <&>"}}}, nil
	})
	srv.AddTool(&mcp.Tool{Name: "fail", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, errors.New("the tool failed")
	})
	srv.AddTool(&mcp.Tool{Name: "rpcfail", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "bad arguments"}
	})
	srv.AddTool(&mcp.Tool{Name: "empty", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	})
	srv.AddTool(&mcp.Tool{Name: "block", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if started != nil {
			started <- "block"
		}
		<-ctx.Done()
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "cancelled: " + context.Cause(ctx).Error()}}}, nil
	})
	srv.AddTool(&mcp.Tool{Name: "gate", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if started != nil {
			started <- "gate"
		}
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "released"}}}, nil
	})
	srv.AddTool(&mcp.Tool{Name: "ask", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: "asking"}); err != nil {
			return nil, err
		}
		res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "ok?", RequestedSchema: &jsonschema.Schema{Type: "object"}})
		if err != nil {
			return nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "answer: " + res.Action}}}, nil
	})
	// A receiving middleware, as pml stdio's server has: its mark is in
	// every result it passes, on both paths.
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if r, ok := res.(*mcp.CallToolResult); ok && err == nil && r != nil {
				r.Meta = mcp.Meta{"mw": method}
			}
			return res, err
		}
	})
	return srv
}

// startStdio serves srv over a pipe pair, with the direct path or without.
func startStdio(t *testing.T, srv *mcp.Server, direct bool) *stdioPeer {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	conn := stdioconn.NewServer(inR, outW, 0)
	p := &stdioPeer{t: t, in: inW, out: bufio.NewReader(outR), done: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		if direct {
			p.done <- serveStdio(ctx, srv, conn, func(id jsonrpc.ID) {
				p.mu.Lock()
				p.taken = append(p.taken, id)
				p.mu.Unlock()
			})
		} else {
			p.done <- srv.Run(ctx, stdioconn.Transport{Conn: conn})
		}
	}()
	t.Cleanup(func() {
		_ = inW.Close()
		cancel()
		go func() { _, _ = io.Copy(io.Discard, outR) }()
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			t.Error("the session did not end")
		}
	})
	return p
}

func (p *stdioPeer) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatalf("send: %v", err)
	}
}

// recv reads one message, decoded.
func (p *stdioPeer) recv() map[string]any {
	p.t.Helper()
	type read struct {
		line []byte
		err  error
	}
	ch := make(chan read, 1)
	go func() {
		line, err := p.out.ReadBytes('\n')
		ch <- read{line, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			p.t.Fatalf("recv: %v", r.err)
		}
		var m map[string]any
		if err := json.Unmarshal(r.line, &m); err != nil {
			p.t.Fatalf("recv %q: %v", r.line, err)
		}
		return m
	case <-time.After(10 * time.Second):
		p.t.Fatal("recv: no answer in 10s")
		return nil
	}
}

func (p *stdioPeer) initialize() {
	p.t.Helper()
	p.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	if m := p.recv(); m["id"] != "init" || m["result"] == nil {
		p.t.Fatalf("initialize: %v", m)
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`)
}

func (p *stdioPeer) tookCalls() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.taken)
}

// The direct path answers as the SDK does: each message, sent to a session
// served with it and to one served by the SDK alone, has the same answer;
// and the direct path takes exactly the calls it should.
func TestStdioAnswersAsTheSDK(t *testing.T) {
	cases := []struct {
		name   string
		msg    string
		noInit bool
		silent bool // no answer
		direct bool // the direct path takes it
	}{
		{name: "ok call", msg: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`, direct: true},
		{name: "string id and _meta", msg: `{"jsonrpc":"2.0","id":"x-1","method":"tools/call","params":{"_meta":{"k":"v"},"name":"echo","arguments":{"text":"hi"}}}`, direct: true},
		{name: "tool error result", msg: `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{}}}`, direct: true},
		{name: "schema-invalid arguments", msg: `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":7}}}`, direct: true},
		{name: "handler error", msg: `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"fail","arguments":{}}}`, direct: true},
		{name: "handler jsonrpc error", msg: `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"rpcfail"}}`, direct: true},
		{name: "empty result", msg: `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"empty","arguments":{}}}`, direct: true},
		{name: "unknown tool", msg: `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope","arguments":{}}}`, direct: true},
		{name: "invalid params: name not a string", msg: `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":7}}`},
		{name: "invalid params: not an object", msg: `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":[1]}`},
		{name: "missing params", msg: `{"jsonrpc":"2.0","id":10,"method":"tools/call"}`},
		{name: "key of another case", msg: `{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"Name":"echo","arguments":{"text":"hi"}}}`},
		{name: "progress token", msg: `{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"progressToken":"p"}}}`},
		{name: "new protocol in _meta", msg: `{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-06-18"}}}`},
		{name: "other method", msg: `{"jsonrpc":"2.0","id":14,"method":"tools/list","params":{}}`},
		{name: "notification", silent: true, msg: `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`},
		{name: "call before initialize", msg: `{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`, noInit: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got [2]map[string]any
			for i, direct := range []bool{false, true} {
				p := startStdio(t, testServer(nil, nil), direct)
				if !tc.noInit {
					p.initialize()
				}
				p.send(tc.msg)
				// A ping after: the session still answers, and a message
				// without an answer has none before the ping's.
				p.send(`{"jsonrpc":"2.0","id":"ping","method":"ping"}`)
				var m map[string]any
				for pinged := false; !pinged || (m == nil && !tc.silent); {
					switch a := p.recv(); {
					case a["id"] == "ping":
						pinged = true
					case m != nil:
						t.Fatalf("direct=%v: a second answer %v", direct, a)
					default:
						m = a
					}
				}
				got[i] = m
				if want := map[bool]int{false: 0, true: 1}[tc.direct && direct]; p.tookCalls() != want {
					t.Errorf("direct=%v: the direct path took %d calls, want %d", direct, p.tookCalls(), want)
				}
			}
			sdk, _ := json.Marshal(got[0])
			dir, _ := json.Marshal(got[1])
			if string(sdk) != string(dir) {
				t.Errorf("answers differ:\nSDK:    %s\ndirect: %s", sdk, dir)
			}
		})
	}
}

// Malformed JSON ends the session on both paths, as the SDK ends it.
func TestStdioMalformedJSON(t *testing.T) {
	for _, direct := range []bool{false, true} {
		p := startStdio(t, testServer(nil, nil), direct)
		p.initialize()
		p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo",`)
		p.send(`}`)
		select {
		case <-p.done:
			p.done <- nil // for the cleanup
		case <-time.After(10 * time.Second):
			t.Fatalf("direct=%v: the session did not end on malformed JSON", direct)
		}
	}
}

// A bad call is answered and the next one served.
func TestStdioBadCallThenNext(t *testing.T) {
	p := startStdio(t, testServer(nil, nil), true)
	p.initialize()
	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope"}}`)
	if m := p.recv(); m["id"] != float64(1) || m["error"] == nil {
		t.Fatalf("bad call: %v", m)
	}
	p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":7}}`)
	if m := p.recv(); m["id"] != float64(2) || m["error"] == nil {
		t.Fatalf("invalid params: %v", m)
	}
	p.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"ok"}}}`)
	m := p.recv()
	if m["id"] != float64(3) || m["error"] != nil {
		t.Fatalf("next call: %v", m)
	}
	if text := m["result"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"]; text != "ok <&>" {
		t.Fatalf("next call's text: %v", text)
	}
}

// notifications/cancelled cancels a direct call's context; its answer is
// still written, as the SDK writes it.
func TestStdioCancel(t *testing.T) {
	started := make(chan string, 1)
	p := startStdio(t, testServer(nil, started), true)
	p.initialize()
	p.send(`{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"block","arguments":{}}}`)
	<-started
	p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"b","reason":"user"}}`)
	m := p.recv()
	if m["id"] != "b" {
		t.Fatalf("answer: %v", m)
	}
	if text := m["result"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"]; text != "cancelled: context canceled" {
		t.Fatalf("text: %v", text)
	}
	if p.tookCalls() != 1 {
		t.Fatalf("the direct path took %d calls", p.tookCalls())
	}
}

// Two calls in flight: the second is answered while the first waits.
func TestStdioConcurrentCalls(t *testing.T) {
	gate := make(chan struct{})
	started := make(chan string, 2)
	p := startStdio(t, testServer(gate, started), true)
	p.initialize()
	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"gate","arguments":{}}}`)
	<-started
	p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"second"}}}`)
	if m := p.recv(); m["id"] != float64(2) {
		t.Fatalf("first answer: %v, want the second call's", m)
	}
	close(gate)
	if m := p.recv(); m["id"] != float64(1) || m["error"] != nil {
		t.Fatalf("second answer: %v, want the first call's", m)
	}
	if p.tookCalls() != 2 {
		t.Fatalf("the direct path took %d calls", p.tookCalls())
	}
}

// A call in flight when the client closes stdin is still answered.
func TestStdioAnswersAfterEOF(t *testing.T) {
	gate := make(chan struct{})
	started := make(chan string, 1)
	p := startStdio(t, testServer(gate, started), true)
	p.initialize()
	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"gate","arguments":{}}}`)
	<-started
	_ = p.in.Close()
	time.Sleep(50 * time.Millisecond)
	close(gate)
	if m := p.recv(); m["id"] != float64(1) || m["error"] != nil {
		t.Fatalf("answer: %v", m)
	}
}

// A direct call has the real session: it logs to the client and asks it
// for input, and the client's answer reaches it.
func TestStdioDirectCallUsesTheSession(t *testing.T) {
	p := startStdio(t, testServer(nil, nil), true)
	p.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"elicitation":{}},"clientInfo":{"name":"c","version":"1"}}}`)
	if m := p.recv(); m["id"] != "init" {
		t.Fatalf("initialize: %v", m)
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`)
	p.send(`{"jsonrpc":"2.0","method":"logging/setLevel","id":"lvl","params":{"level":"info"}}`)
	if m := p.recv(); m["id"] != "lvl" {
		t.Fatalf("setLevel: %v", m)
	}
	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask","arguments":{}}}`)
	if m := p.recv(); m["method"] != "notifications/message" {
		t.Fatalf("want the log message first, got %v", m)
	}
	ask := p.recv()
	if ask["method"] != "elicitation/create" {
		t.Fatalf("want elicitation/create, got %v", ask)
	}
	id, _ := json.Marshal(ask["id"])
	p.send(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"action":"accept","content":{}}}`)
	m := p.recv()
	if m["id"] != float64(1) || m["error"] != nil {
		t.Fatalf("answer: %v", m)
	}
	if text := m["result"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"]; text != "answer: accept" {
		t.Fatalf("text: %v", text)
	}
	if p.tookCalls() != 1 {
		t.Fatalf("the direct path took %d calls", p.tookCalls())
	}
}

// What a call defers until its answer is written (afteranswer) runs after
// the write: the answer arrives while that work is still held, the next
// call is served meanwhile, and the session's end waits for it.
func TestStdioDeferredWorkRunsAfterTheAnswer(t *testing.T) {
	release, ran := make(chan struct{}), make(chan string, 2)
	srv := testServer(nil, nil)
	srv.AddTool(&mcp.Tool{Name: "later", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		afteranswer.Defer(ctx, func() {
			<-release
			ran <- "deferred"
		})
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "answered"}}}, nil
	})
	p := startStdio(t, srv, true)
	p.initialize()
	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"later","arguments":{}}}`)
	if m := p.recv(); m["id"] != float64(1) || m["error"] != nil {
		t.Fatalf("answer: %v", m)
	}
	p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"next"}}}`)
	if m := p.recv(); m["id"] != float64(2) || m["error"] != nil {
		t.Fatalf("next call's answer: %v", m)
	}
	_ = p.in.Close()
	select {
	case err := <-p.done:
		t.Fatalf("the session ended (%v) before the deferred work ran", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if got := <-ran; got != "deferred" {
		t.Fatal(got)
	}
	select {
	case err := <-p.done:
		p.done <- err // for the cleanup
	case <-time.After(10 * time.Second):
		t.Fatal("the session did not end once the deferred work ran")
	}
	if p.tookCalls() != 2 {
		t.Fatalf("the direct path took %d calls", p.tookCalls())
	}
}
