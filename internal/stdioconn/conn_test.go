package stdioconn

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Decode reads every message as the SDK's jsonrpc.DecodeMessage does: the
// same message, or an error for the same inputs; keys are matched exactly.
func TestDecodeAgreesWithTheSDK(t *testing.T) {
	for _, in := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`,
		`{"jsonrpc":"2.0","id":"abc","method":"ping"}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`,
		`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"Echo: hi"}]}}`,
		`{"jsonrpc":"2.0","id":7,"result":null}`,
		`{"jsonrpc":"2.0","id":8,"error":{"code":-32601,"message":"no such method","data":{"x":1}}}`,
		`{"jsonrpc":"2.0","id":8,"error":null,"result":{}}`,
		`{"jsonrpc":"2.0","id":2.9,"result":{}}`,
		`{"jsonrpc":"2.0","id":null,"method":"x"}`,
		`{"jsonrpc":"2.0","id":1,"method":null}`,
		`{"jsonrpc":"2.0","ID":1,"result":{}}`,
		`{"jsonrpc":"2.0","id":1,"Method":"x","result":{}}`,
		`{"JSONRPC":"2.0","id":1,"result":{}}`,
		`{"jsonrpc":"1.0","id":1,"result":{}}`,
		`{"id":1,"result":{}}`,
		`{"jsonrpc":"2.0","result":{}}`,
		`{"jsonrpc":"2.0","id":true,"result":{}}`,
		`{"jsonrpc":"2.0","id":1,"method":3}`,
		`{"jsonrpc":"2.0","id":1,"error":"boom"}`,
		`[]`,
		`"text"`,
		`{"jsonrpc":"2.0","id":1,"result":{}`,
		// What decodeValid finds in one pass: nesting, strings holding
		// brackets, quotes and escapes, spaces, repeated keys, escaped keys.
		` { "jsonrpc" : "2.0" , "id" : 3 , "result" : { "a" : [ 1 , { "b" : "]}\"\\" } ] , "c" : -1.5e3 } } `,
		`{"jsonrpc":"2.0","id":3,"result":[1,2],"result":{"x":null}}`,
		`{"jsonrpc":"2.0","id":3,"result":"a string"}`,
		`{"jsonrpc":"2.0","id":3,"result":true}`,
		`{"jsonrpc":"2.0","id":"x\"y","method":"m","params":{"k":"\u00e9"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools\/call"}`,
		`{"jsonrpc":"2.0","id":1,"\u006dethod":"ping"}`,
		`{"jsonrpc":"2\u002e0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","id":1,"method":"x","id":2}`,
		`{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}`,
		`{"jsonrpc":"2.0","id":[1],"result":{}}`,
		`{"jsonrpc":"2.0","id":1e400,"result":{}}`,
		`{}`,
		`null`,
		`12`,
	} {
		want, wantErr := jsonrpc.DecodeMessage([]byte(in))
		decoders := map[string]func([]byte) (jsonrpc.Message, error){"decode": decode}
		if json.Valid([]byte(in)) { // decodeValid reads only what the reader validated
			decoders["decodeValid"] = decodeValid
		}
		for name, dec := range decoders {
			got, err := dec([]byte(in))
			if (err != nil) != (wantErr != nil) {
				t.Errorf("%s %s: error %v, the SDK's %v", name, in, err, wantErr)
				continue
			}
			if err != nil {
				continue
			}
			if g, w := encode(t, got), encode(t, want); g != w {
				t.Errorf("%s %s:\n got %s\nwant %s", name, in, g, w)
			}
		}
	}
}

func encode(t *testing.T, m jsonrpc.Message) string {
	t.Helper()
	b, err := jsonrpc.EncodeMessage(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// pipeConn is a Conn whose server side the test writes to and reads from.
func pipeConn(t *testing.T, limit int) (c *Conn, server io.WriteCloser, fromClient io.Reader) {
	t.Helper()
	outR, outW := io.Pipe() // the server's stdout
	inR, inW := io.Pipe()   // the server's stdin
	c = New(outR, inW, limit)
	t.Cleanup(func() { _ = c.Close(); _ = outW.Close() })
	return c, outW, inR
}

func read(t *testing.T, c *Conn) (jsonrpc.Message, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return c.Read(ctx)
}

// Messages are read as the SDK's IOTransport reads them: a value may span
// lines, a batch gives its messages in order, and a line holding more than
// one value ends the connection.
func TestConnReadsTheStream(t *testing.T) {
	c, server, _ := pipeConn(t, 0)
	go func() {
		_, _ = io.WriteString(server, "{\"jsonrpc\":\"2.0\",\n  \"id\":1,\n  \"result\":{}}\n"+
			`[{"jsonrpc":"2.0","id":2,"result":{}},{"jsonrpc":"2.0","method":"notifications/message","params":{}}]`+"\n"+
			`{"jsonrpc":"2.0","id":3,"result":{}} {"jsonrpc":"2.0","id":4,"result":{}}`+"\n")
	}()
	for _, want := range []string{`"id":1`, `"id":2`, `"method":"notifications/message"`} {
		msg, err := read(t, c)
		if err != nil {
			t.Fatalf("want %s: %v", want, err)
		}
		if got := encode(t, msg); !strings.Contains(got, want) {
			t.Errorf("read %s, want %s", got, want)
		}
	}
	if _, err := read(t, c); err == nil || !strings.Contains(err.Error(), "trailing data") {
		t.Errorf("two values on a line: %v", err)
	}
}

// A message over the line bound ends the connection.
func TestConnBoundsAMessage(t *testing.T) {
	c, server, _ := pipeConn(t, 64)
	go func() {
		_, _ = io.WriteString(server, `{"jsonrpc":"2.0","id":1,"result":{"text":"`+strings.Repeat("x", 100)+`"}}`+"\n")
	}()
	if _, err := read(t, c); !errors.Is(err, errFrameTooLarge) {
		t.Errorf("a 130-byte message under a 64-byte bound: %v", err)
	}
}

// Close unblocks a Read waiting for a silent server; Write puts one message
// on one line.
func TestConnCloseAndWrite(t *testing.T) {
	c, _, fromClient := pipeConn(t, 0)
	lines := make(chan string, 1)
	go func() {
		b := make([]byte, 256)
		n, _ := fromClient.Read(b)
		lines <- string(b[:n])
	}()
	req := &jsonrpc.Request{Method: "ping", ID: mustID(t, 5)}
	if err := c.Write(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if got := <-lines; got != `{"jsonrpc":"2.0","id":5,"method":"ping"}`+"\n" {
		t.Errorf("wrote %q", got)
	}
	done := make(chan error, 1)
	go func() { _, err := c.Read(context.Background()); done <- err }()
	time.Sleep(10 * time.Millisecond)
	_ = c.Close()
	select {
	case err := <-done:
		if err == nil {
			t.Error("Read after Close returned a message")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not unblock Read")
	}
}

func mustID(t *testing.T, v float64) jsonrpc.ID {
	t.Helper()
	id, err := jsonrpc.MakeID(v)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// An SDK client session runs over a Conn: the handshake and a tool call
// against an SDK server.
func TestConnCarriesAnSDKSession(t *testing.T) {
	srvOutR, srvOutW := io.Pipe()
	srvInR, srvInW := io.Pipe()
	server := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
		Message string `json:"message"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Echo: " + in.Message}}}, nil, nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	go func() { _ = server.Run(ctx, &mcp.IOTransport{Reader: srvInR, Writer: srvOutW}) }()
	conn := New(srvOutR, srvInW, 0)
	client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
	cs, err := client.Connect(ctx, connected{conn}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hi"}})
	if err != nil {
		t.Fatal(err)
	}
	if txt, ok := res.Content[0].(*mcp.TextContent); !ok || txt.Text != "Echo: hi" {
		t.Errorf("result %+v", res.Content)
	}
}

type connected struct{ c *Conn }

func (t connected) Connect(context.Context) (mcp.Connection, error) { return t.c, nil }

// serve runs an SDK server with an echo tool over a server Conn; the test
// writes the client's lines and reads the server's.
func serve(t *testing.T) (client io.WriteCloser, lines *bufio.Scanner) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	server := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
		Message string `json:"message"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Echo: " + in.Message}}}, nil, nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = server.Run(ctx, Transport{NewServer(inR, outW, 0)})
	}()
	t.Cleanup(func() { cancel(); _ = inW.Close(); _ = outR.Close(); <-done })
	return inW, bufio.NewScanner(outR)
}

func send(t *testing.T, w io.Writer, line string) {
	t.Helper()
	if _, err := io.WriteString(w, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

func next(t *testing.T, lines *bufio.Scanner) string {
	t.Helper()
	got := make(chan string, 1)
	go func() {
		if lines.Scan() {
			got <- lines.Text()
		} else {
			got <- "EOF: " + fmt.Sprint(lines.Err())
		}
	}()
	select {
	case l := <-got:
		return l
	case <-time.After(10 * time.Second):
		t.Fatal("no answer")
		return ""
	}
}

func initialize(version string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + version +
		`","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
}

const initialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`

// On a session of protocol 2025-03-26 a batch's requests are answered in
// one array, in the batch's order, as the SDK's IOTransport answers them; a
// notification in the batch is not waited for (the SDK's IOTransport waits
// for an answer to it too, and never answers the batch).
func TestServerAnswersABatchInOneArray(t *testing.T) {
	client, lines := serve(t)
	send(t, client, initialize("2025-03-26"))
	if l := next(t, lines); !strings.Contains(l, `"protocolVersion":"2025-03-26"`) {
		t.Fatalf("initialize: %s", l)
	}
	send(t, client, initialized)
	send(t, client, `[{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"a"}}},`+
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}},`+
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"message":"b"}}}]`)
	l := next(t, lines)
	var batch []map[string]any
	if err := json.Unmarshal([]byte(l), &batch); err != nil || len(batch) != 2 {
		t.Fatalf("want one array of two answers, got %s", l)
	}
	if batch[0]["id"] != 2.0 || batch[1]["id"] != 3.0 || !strings.Contains(l, "Echo: a") || !strings.Contains(l, "Echo: b") {
		t.Errorf("answers %s", l)
	}
	// A request alone is answered alone.
	send(t, client, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"message":"c"}}}`)
	if l := next(t, lines); !strings.HasPrefix(l, `{"jsonrpc":"2.0","id":4,`) || !strings.Contains(l, "Echo: c") {
		t.Errorf("answer %s", l)
	}
}

// Once a session negotiated 2025-06-18 or later, a batch ends it, as with
// the SDK's IOTransport.
func TestServerRefusesBatchesFrom20250618(t *testing.T) {
	client, lines := serve(t)
	send(t, client, initialize("2025-06-18"))
	if l := next(t, lines); !strings.Contains(l, `"protocolVersion":"2025-06-18"`) {
		t.Fatalf("initialize: %s", l)
	}
	send(t, client, initialized)
	send(t, client, `[{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"a"}}}]`)
	if l := next(t, lines); !strings.HasPrefix(l, "EOF") {
		t.Errorf("a batch after 2025-06-18 was answered: %s", l)
	}
}

// EncodeMessage writes what jsonrpc.EncodeMessage writes, a response's
// result put in as it is.
func TestEncodeMessageAgreesWithTheSDK(t *testing.T) {
	num, _ := jsonrpc.MakeID(float64(7))
	str, _ := jsonrpc.MakeID("a\"b")
	for _, msg := range []jsonrpc.Message{
		&jsonrpc.Response{ID: num, Result: json.RawMessage(`{"content":[{"type":"text","text":"<b>&"}]}`)},
		&jsonrpc.Response{ID: str, Result: json.RawMessage(`{}`)},
		&jsonrpc.Response{ID: num, Error: &jsonrpc.Error{Code: -32602, Message: "bad"}},
		&jsonrpc.Response{ID: num, Error: errors.New("plain")},
		&jsonrpc.Request{ID: num, Method: "tools/call", Params: json.RawMessage(`{"name":"x"}`)},
		&jsonrpc.Request{Method: "notifications/cancelled", Params: json.RawMessage(`{"requestId":7}`)},
	} {
		got, err := EncodeMessage(msg)
		if err != nil {
			t.Fatal(err)
		}
		want, err := jsonrpc.EncodeMessage(msg)
		if err != nil {
			t.Fatal(err)
		}
		var g, w any
		if json.Unmarshal(got, &g) != nil || json.Unmarshal(want, &w) != nil || fmt.Sprint(g) != fmt.Sprint(w) {
			t.Errorf("EncodeMessage = %s, the SDK's %s", got, want)
		}
	}
}
