package gateway_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/wire"
)

// mcpCase is one request to the MCP endpoint.
type mcpCase struct {
	name string
	hdr  map[string]string // over the base headers; "" deletes one
	body string
	// direct: the direct path serves it (the rest goes to the SDK).
	direct bool
}

// mcpBase are the headers of a stateless POST of protocol version.
func mcpBase(version string) map[string]string {
	return map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "Mcp-Protocol-Version": version}
}

// newHeaders are those of a 2026-07-28 call of tool.
func newHeaders(tool string) map[string]string {
	h := mcpBase("2026-07-28")
	h["Mcp-Method"], h["Mcp-Name"] = "tools/call", tool
	return h
}

const newMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"0"},"io.modelcontextprotocol/clientCapabilities":{}}`

// callBody is a tools/call of tool with args (raw JSON), id 1, with meta
// (a raw `"_meta":…` member, or none).
func callBody(tool, args, meta string) string {
	p := fmt.Sprintf(`"name":%q,"arguments":%s`, tool, args)
	if meta != "" {
		p += "," + meta
	}
	return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + p + `}}`
}

const okArgs = `{"code":"return await mcp.math.add({a: 1, b: 2})"}`

// mcpCases are the requests the direct path must answer as the SDK does,
// or leave to it.
func mcpCases() []mcpCase {
	old := mcpBase("2025-11-25")
	with := func(h map[string]string, k, v string) map[string]string {
		c := map[string]string{}
		for kk, vv := range h {
			c[kk] = vv
		}
		c[k] = v
		return c
	}
	return []mcpCase{
		{name: "ok call", hdr: old, body: callBody("execute", okArgs, ""), direct: true},
		{name: "ok call 2026-07-28", hdr: newHeaders("execute"), body: callBody("execute", okArgs, newMeta), direct: true},
		{name: "ok call 2025-06-18", hdr: mcpBase("2025-06-18"), body: callBody("execute", okArgs, ""), direct: true},
		{name: "string id", hdr: old, body: strings.Replace(callBody("execute", okArgs, ""), `"id":1`, `"id":"a-1"`, 1), direct: true},
		{name: "fractional id", hdr: old, body: strings.Replace(callBody("execute", okArgs, ""), `"id":1`, `"id":2.9`, 1), direct: true},
		{name: "other meta", hdr: old, body: callBody("execute", okArgs, `"_meta":{"pml/trace_id":"x","n":[1,{"a":2}]}`), direct: true},
		{name: "tool error", hdr: old, body: callBody("execute", `{"code":"throw new Error('boom')"}`, ""), direct: true},
		{name: "tool error 2026-07-28", hdr: newHeaders("execute"), body: callBody("execute", `{"code":"return await mcp.nope.x({})"}`, newMeta), direct: true},
		{name: "schema-invalid arguments", hdr: old, body: callBody("execute", `{"code":5}`, ""), direct: true},
		{name: "arguments not an object", hdr: old, body: callBody("execute", `"x"`, ""), direct: true},
		{name: "no arguments", hdr: old, body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"execute"}}`, direct: true},
		{name: "null arguments", hdr: old, body: callBody("execute", `null`, ""), direct: true},
		{name: "call tool", hdr: old, body: callBody("call", `{"tool":"math:add","args":{"a":2,"b":5}}`, ""), direct: true},
		{name: "call tool invalid", hdr: old, body: callBody("call", `{"tool":5}`, ""), direct: true},
		{name: "discover", hdr: newHeaders("discover"), body: callBody("discover", `{"name":"math:add"}`, newMeta), direct: true},
		{name: "admin list", hdr: old, body: callBody("admin", `{"action":"list"}`, ""), direct: true},
		{name: "admin invalid", hdr: old, body: callBody("admin", `{"action":"bogus"}`, ""), direct: true},
		{name: "html in the answer", hdr: old, body: callBody("execute", `{"code":"return '<a&b>'"}`, ""), direct: true},
		{name: "unknown tool", hdr: old, body: callBody("nope", `{}`, "")},
		{name: "unknown tool 2026-07-28", hdr: newHeaders("nope"), body: callBody("nope", `{}`, newMeta)},
		{name: "invalid params", hdr: old, body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":"x"}`},
		{name: "name not a string", hdr: old, body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5}}`},
		{name: "no params", hdr: old, body: `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`},
		{name: "null params", hdr: old, body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":null}`},
		{name: "meta not an object", hdr: old, body: callBody("execute", okArgs, `"_meta":5`)},
		{name: "no protocol version header", hdr: with(old, "Mcp-Protocol-Version", ""), body: callBody("execute", okArgs, "")},
		{name: "unsupported protocol version", hdr: with(old, "Mcp-Protocol-Version", "1999-01-01"), body: callBody("execute", okArgs, "")},
		{name: "a later protocol version", hdr: with(newHeaders("execute"), "Mcp-Protocol-Version", "2099-01-01"), body: callBody("execute", okArgs, strings.ReplaceAll(newMeta, "2026-07-28", "2099-01-01"))},
		{name: "2026-07-28 without _meta", hdr: newHeaders("execute"), body: callBody("execute", okArgs, "")},
		{name: "2026-07-28 meta version differs", hdr: newHeaders("execute"), body: callBody("execute", okArgs, strings.Replace(newMeta, "2026-07-28", "2025-11-25", 1))},
		{name: "2026-07-28 roots and sampling", hdr: newHeaders("execute"), body: callBody("execute", okArgs, `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"0","title":"T","websiteUrl":"https://x"},"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true},"sampling":{}}}`), direct: true},
		{name: "2026-07-28 client info with icons", hdr: newHeaders("execute"), body: callBody("execute", okArgs, `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"0","icons":[{"src":"https://x/i.png"}]},"io.modelcontextprotocol/clientCapabilities":{"roots":{}}}`), direct: true},
		{name: "2026-07-28 roots of another shape", hdr: newHeaders("execute"), body: callBody("execute", okArgs, `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":"yes"}}}`)},
		{name: "2026-07-28 null capabilities", hdr: newHeaders("execute"), body: callBody("execute", okArgs, `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":null}`)},
		{name: "2026-07-28 without capabilities", hdr: newHeaders("execute"), body: callBody("execute", okArgs, `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`)},
		{name: "2026-07-28 bad client info", hdr: newHeaders("execute"), body: callBody("execute", okArgs, `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":5,"io.modelcontextprotocol/clientCapabilities":{}}`)},
		{name: "2026-07-28 eliciting client", hdr: newHeaders("execute"), body: callBody("execute", okArgs, `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}`)},
		{name: "2026-07-28 without Mcp-Name", hdr: with(newHeaders("execute"), "Mcp-Name", ""), body: callBody("execute", okArgs, newMeta)},
		{name: "2026-07-28 wrong Mcp-Method", hdr: with(newHeaders("execute"), "Mcp-Method", "tools/list"), body: callBody("execute", okArgs, newMeta)},
		{name: "old version with a meta version", hdr: old, body: callBody("execute", okArgs, `"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25"}`)},
		{name: "wrong Accept", hdr: with(old, "Accept", "application/json"), body: callBody("execute", okArgs, "")},
		{name: "wrong Content-Type", hdr: with(old, "Content-Type", "text/plain"), body: callBody("execute", okArgs, "")},
		{name: "session header", hdr: with(old, "Mcp-Session-Id", "abc"), body: callBody("execute", okArgs, "")},
		// The edge's body bound refuses it before either path sees it.
		{name: "oversized body", hdr: old, body: callBody("execute", `{"code":"return 1","intent":"`+strings.Repeat("x", wire.MaxRequestBytes)+`"}`, ""), direct: true},
		{name: "malformed JSON", hdr: old, body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`},
		{name: "empty body", hdr: old, body: ``},
		{name: "trailing data", hdr: old, body: callBody("execute", okArgs, "") + `{}`},
		{name: "notification", hdr: old, body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
		{name: "call without id", hdr: old, body: `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"execute","arguments":{}}}`},
		{name: "null id", hdr: old, body: strings.Replace(callBody("execute", okArgs, ""), `"id":1`, `"id":null`, 1)},
		{name: "bool id", hdr: old, body: strings.Replace(callBody("execute", okArgs, ""), `"id":1`, `"id":true`, 1)},
		{name: "wrong version tag", hdr: old, body: strings.Replace(callBody("execute", okArgs, ""), `"2.0"`, `"1.0"`, 1)},
		{name: "key in another case", hdr: old, body: strings.Replace(callBody("execute", okArgs, ""), `"method"`, `"Method"`, 1)},
		{name: "params key in another case", hdr: old, body: strings.Replace(callBody("execute", okArgs, ""), `"name"`, `"Name"`, 1)},
		{name: "a key twice", hdr: old, body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"admin","name":"execute","arguments":` + okArgs + `}}`, direct: true},
		{name: "invalid UTF-8", hdr: old, body: callBody("execute", "{\"code\":\"return '\xff'\"}", ""), direct: true},
		{name: "escaped key", hdr: old, body: strings.Replace(callBody("execute", okArgs, ""), `"name"`, `"n\u0061me"`, 1), direct: true},
		{name: "request state", hdr: old, body: callBody("execute", okArgs, `"requestState":"x"`)},
		{name: "progress token", hdr: old, body: callBody("execute", okArgs, `"_meta":{"progressToken":7}`)},
		{name: "batch", hdr: mcpBase("2025-03-26"), body: `[` + callBody("execute", okArgs, "") + `]`},
		{name: "initialize", hdr: with(old, "Mcp-Protocol-Version", ""), body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`},
		{name: "tools/list", hdr: old, body: `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}}`},
	}
}

// mcpAnswer is what a test compares of an answer.
type mcpAnswer struct {
	Status       int
	ContentType  string
	CacheControl string
	Body         any
}

// postMCP sends c to base's /mcp with key through client.
func postMCP(t *testing.T, client *http.Client, base, key string, c mcpCase) mcpAnswer {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(c.body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	for k, v := range c.hdr {
		if v != "" {
			req.Header.Set(k, v)
		}
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", c.name, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return mcpAnswer{Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"),
		CacheControl: resp.Header.Get("Cache-Control"), Body: comparable(resp.Header.Get("Content-Type"), raw)}
}

// comparable is a body as the test compares it: JSON decoded (an event
// stream's data decoded one by one), a JSON string holding JSON decoded too,
// and the values that differ from run to run (ids, durations, the learned
// capability) replaced by their presence.
func comparable(contentType string, raw []byte) any {
	if strings.HasPrefix(contentType, "text/event-stream") {
		var events []any
		sc := bufio.NewScanner(bytes.NewReader(raw))
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				events = append(events, comparable("application/json", []byte(data)))
			}
		}
		return events
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	return normalize(v)
}

func normalize(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			switch k {
			case "workflow_id", "trace_id", "duration_ms", "capability":
				v[k] = "<set>"
			default:
				v[k] = normalize(e)
			}
		}
	case []any:
		for i, e := range v {
			v[i] = normalize(e)
		}
	case string:
		var inner any
		if strings.HasPrefix(v, "{") && json.Unmarshal([]byte(v), &inner) == nil {
			return normalize(inner)
		}
	}
	return v
}

// The direct tools/call path answers every request as the SDK's handler
// does: the same status, content type, cache control and JSON, whether it
// serves the request or leaves it to the SDK; and after each request, the
// endpoint still serves the next call.
func TestDirectCallsAgreeWithTheSDK(t *testing.T) {
	g := gatewaytest.Start(t, gateway.Options{})
	direct := httptest.NewServer(g.Service.Handler())
	t.Cleanup(direct.Close)
	sdk := httptest.NewServer(g.Service.SDKOnlyHandler())
	t.Cleanup(sdk.Close)
	dc, sc := &http.Client{}, &http.Client{}
	ok := mcpCase{name: "next call", hdr: mcpBase("2025-11-25"), body: callBody("execute", okArgs, "")}
	want := postMCP(t, sc, sdk.URL, g.Key, ok)
	for _, c := range mcpCases() {
		t.Run(c.name, func(t *testing.T) {
			hdr := http.Header{}
			for k, v := range c.hdr {
				if v != "" {
					hdr.Set(k, v)
				}
			}
			if got := g.Service.ServesDirectly(hdr, []byte(c.body)); got != c.direct {
				t.Errorf("served directly: %v, want %v", got, c.direct)
			}
			a, b := postMCP(t, dc, direct.URL, g.Key, c), postMCP(t, sc, sdk.URL, g.Key, c)
			if !reflect.DeepEqual(a, b) {
				t.Errorf("direct path:\n%+v\nSDK:\n%+v", a, b)
			}
			if next := postMCP(t, dc, direct.URL, g.Key, ok); !reflect.DeepEqual(next, want) {
				t.Errorf("the next call: %+v, want %+v", next, want)
			}
		})
	}
}

// The Go SDK client's tool calls, the package's and the benchmarks', are
// the ones the direct path serves; its initialization and listing are not.
func TestSDKClientCallsAreServedDirectly(t *testing.T) {
	g := gatewaytest.Start(t, gateway.Options{})
	type seen struct {
		hdr  http.Header
		body []byte
	}
	var mu sync.Mutex
	var posts []seen
	h := g.Service.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			posts = append(posts, seen{r.Header.Clone(), body})
			mu.Unlock()
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	s := (&gatewaytest.Gateway{URL: srv.URL}).Connect(t, g.Key, true)
	if a := gatewaytest.Execute(t, s, wire.ExecuteRequest{Code: `return await mcp.math.add({a: 1, b: 2})`}); a.Status != wire.StatusSuccess {
		t.Fatalf("execute: %+v", a)
	}
	gatewaytest.Discover(t, s, wire.DiscoverRequest{Name: "math:add"})
	mu.Lock()
	defer mu.Unlock()
	calls := 0
	for _, p := range posts {
		_, tool, _ := gatewaytest.ToolCallOf(p.body)
		direct := g.Service.ServesDirectly(p.hdr, p.body)
		if (tool != "") != direct {
			t.Errorf("served directly: %v, a call of %q: %s", direct, tool, p.body)
		}
		if tool != "" {
			calls++
		}
	}
	if calls != 2 {
		t.Errorf("%d tool calls seen, want 2", calls)
	}
}

// gatewaytest.RawExecute's requests, an old-protocol client's stateless
// POST, take the direct path when they name their version: so
// TestDisconnectedClientsLeaveAdmissionAtZero and
// TestDrainCancelsRunsOfEveryProtocol check that a client going away, or a
// drain, cancels a direct run (and, without the header, an SDK one).
func TestRawExecuteIsServedDirectly(t *testing.T) {
	g := gatewaytest.Start(t, gateway.Options{})
	body := []byte(callBody("execute", okArgs, ""))
	for _, version := range oldProtocols {
		hdr := http.Header{}
		hdr.Set("Content-Type", "application/json")
		hdr.Set("Accept", "application/json, text/event-stream")
		if version != "" {
			hdr.Set("Mcp-Protocol-Version", version)
		}
		if got := g.Service.ServesDirectly(hdr, body); got != (version != "") {
			t.Errorf("version %q: served directly %v", version, got)
		}
	}
}
