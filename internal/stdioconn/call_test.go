package stdioconn

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fakeServer reads the requests a Conn writes, one per line.
func fakeServer(t *testing.T, fromClient io.Reader) <-chan map[string]json.RawMessage {
	t.Helper()
	lines := make(chan map[string]json.RawMessage, 16)
	go func() {
		sc := bufio.NewScanner(fromClient)
		for sc.Scan() {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Errorf("the client wrote %q: %v", sc.Text(), err)
			}
			lines <- m
		}
		close(lines)
	}()
	return lines
}

func nextLine(t *testing.T, lines <-chan map[string]json.RawMessage) map[string]json.RawMessage {
	t.Helper()
	select {
	case m := <-lines:
		return m
	case <-time.After(5 * time.Second):
		t.Fatal("the client wrote nothing")
		return nil
	}
}

// Call's answer goes to Call, never to Read; what else the server sends,
// before and after it (a notification, the answer to the SDK's own request),
// Read still gives in order. An error answer is a *jsonrpc.Error, and an
// answer in a server's batch reaches Call too.
func TestCallTakesItsAnswerBesideTheSession(t *testing.T) {
	c, server, fromClient := pipeConn(t, 0)
	lines := fakeServer(t, fromClient)
	ctx := context.Background()
	// The SDK's session reads all along, as here.
	readMsgs := make(chan string, 16)
	go func() {
		for {
			msg, err := c.Read(ctx)
			if err != nil {
				close(readMsgs)
				return
			}
			readMsgs <- encode(t, msg)
		}
	}()
	readNext := func(want string) {
		t.Helper()
		select {
		case got := <-readMsgs:
			if !strings.Contains(got, want) {
				t.Fatalf("Read %s, want %s", got, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("Read nothing, want %s", want)
		}
	}

	type answer struct {
		res json.RawMessage
		err error
	}
	call := func(params string) <-chan answer {
		out := make(chan answer, 1)
		go func() {
			res, err := c.Call(ctx, "tools/call", json.RawMessage(params))
			out <- answer{res, err}
		}()
		return out
	}
	first := call(`{"name":"echo","arguments":{"text":"hi"}}`)
	req := nextLine(t, lines)
	if string(req["method"]) != `"tools/call"` || string(req["params"]) != `{"name":"echo","arguments":{"text":"hi"}}` || string(req["jsonrpc"]) != `"2.0"` {
		t.Fatalf("request %v", req)
	}
	id := string(req["id"])
	_, _ = io.WriteString(server, `{"jsonrpc":"2.0","method":"notifications/message","params":{}}`+"\n"+
		`{"jsonrpc":"2.0","id":`+id+`,"result":{"content":[]}}`+"\n"+
		`{"jsonrpc":"2.0","id":1,"result":{}}`+"\n")
	if a := <-first; a.err != nil || string(a.res) != `{"content":[]}` {
		t.Fatalf("Call = %s, %v", a.res, a.err)
	}
	readNext(`"method":"notifications/message"`)
	readNext(`"id":1,"result"`)

	second := call(`{}`)
	id = string(nextLine(t, lines)["id"])
	_, _ = io.WriteString(server, `{"jsonrpc":"2.0","id":`+id+`,"error":{"code":-32602,"message":"bad"}}`+"\n")
	var werr *jsonrpc.Error
	if a := <-second; !errors.As(a.err, &werr) || werr.Message != "bad" {
		t.Fatalf("error answer: %v", a.err)
	}

	third := call(`{}`)
	id = string(nextLine(t, lines)["id"])
	_, _ = io.WriteString(server, `[{"jsonrpc":"2.0","id":`+id+`,"result":{"n":3}},{"jsonrpc":"2.0","id":2,"result":{}}]`+"\n")
	if a := <-third; a.err != nil || string(a.res) != `{"n":3}` {
		t.Fatalf("answer in a batch: %s, %v", a.res, a.err)
	}
	readNext(`"id":2`)
}

// A caller that gives up gets its context's error at once, and the server
// a notifications/cancelled naming the request; a stream that ends fails a
// waiting Call with mcp.ErrConnectionClosed.
func TestCallCancelledAndClosed(t *testing.T) {
	c, server, fromClient := pipeConn(t, 0)
	lines := fakeServer(t, fromClient)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.Call(ctx, "tools/call", json.RawMessage(`{}`))
		done <- err
	}()
	id := string(nextLine(t, lines)["id"])
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Call: %v", err)
	}
	note := nextLine(t, lines)
	var params struct {
		RequestID json.RawMessage `json:"requestId"`
		Reason    string          `json:"reason"`
	}
	if string(note["method"]) != `"notifications/cancelled"` || json.Unmarshal(note["params"], &params) != nil || string(params.RequestID) != id || params.Reason == "" {
		t.Fatalf("after the cancel the client wrote %v", note)
	}

	go func() {
		_, err := c.Call(context.Background(), "tools/call", json.RawMessage(`{}`))
		done <- err
	}()
	nextLine(t, lines)
	_ = server.Close()
	go func() { _, _ = read(t, c) }() // the SDK's reader takes the stream's end
	select {
	case err := <-done:
		if !errors.Is(err, mcp.ErrConnectionClosed) {
			t.Fatalf("Call when the stream ended: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Call still waiting after the stream ended")
	}
	if _, err := c.Call(context.Background(), "x", json.RawMessage("{\n}")); err == nil {
		t.Fatal("params on two lines were sent")
	}
}
