package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/sandbox"
	"github.com/pml-go/pml/internal/testfixture"
	"github.com/pml-go/pml/internal/upstream"
	"github.com/pml-go/pml/internal/wire"
)

// startWithFixture runs a gateway hosting the fixture MCP server as "fx".
func startWithFixture(t *testing.T) *gatewaytest.Gateway {
	t.Helper()
	bin := testfixture.BuildServer(t)
	return gatewaytest.Start(t, gateway.Options{
		Config: gateway.FileConfig{Servers: map[string]gateway.ServerEntry{
			"fx":       {ServerConfig: upstream.ServerConfig{Command: bin}, Hosted: true, Description: "fixture"},
			"catalogd": {ServerConfig: upstream.ServerConfig{Command: "npx", Args: []string{"some-server"}}, Description: "installed by packages"},
		}},
		// A small heap keeps the memory-bomb case quick under -race, where the
		// engine runs tens of times slower.
		Limits: sandbox.Limits{RPCTimeout: 300 * time.Millisecond, MemoryBytes: 8 << 20},
	})
}

func wantError(t *testing.T, a wire.Answer, code pmlerr.Code) {
	t.Helper()
	if a.Status != wire.StatusError || a.ErrorCode != code {
		t.Fatalf("want error %s, got %s %s: %s", code, a.Status, a.ErrorCode, a.Error)
	}
	if a.Error == "" {
		t.Fatalf("error %s without a message", code)
	}
}

// alive checks that the gateway still serves a normal request.
func alive(t *testing.T, s *mcp.ClientSession) {
	t.Helper()
	a := gatewaytest.Execute(t, s, wire.ExecuteRequest{Code: "return await mcp.math.add({a: 2, b: 3})"})
	if a.Status != wire.StatusSuccess || string(a.Result) != "5" {
		t.Fatalf("next request failed: %+v", a)
	}
}

// Server-only code runs on the gateway.
func TestServerOnlyExecutesOnGateway(t *testing.T) {
	g := startWithFixture(t)
	s := g.Connect(t, g.Key, true)
	a := gatewaytest.Execute(t, s, wire.ExecuteRequest{Code: `
		const parsed = await mcp.json.parse({ data: '{"n": 20}' });
		const sum = await mcp.math.add({ a: parsed.n, b: 22 });
		const h = await mcp.crypto.sha256({ data: "x" });
		console.log("sum is", sum);
		return { sum, h };`})
	if a.Status != wire.StatusSuccess {
		t.Fatalf("status %s: %s %s", a.Status, a.ErrorCode, a.Error)
	}
	var res struct {
		Sum float64 `json:"sum"`
		H   string  `json:"h"`
	}
	if err := json.Unmarshal(a.Result, &res); err != nil || res.Sum != 42 || len(res.H) != 64 {
		t.Fatalf("result %s (%v)", a.Result, err)
	}
	if a.ExecutedLocally == nil || *a.ExecutedLocally || a.WorkflowID == "" || a.TraceID == "" || a.DurationMS == nil {
		t.Fatalf("success fields missing: %+v", a)
	}
	if len(a.Logs) != 1 || a.Logs[0] != "sum is 42" {
		t.Fatalf("logs %q", a.Logs)
	}
	tools, _ := json.Marshal(a.ToolsUsed)
	if string(tools) != `["json:parse","math:add","crypto:sha256"]` {
		t.Fatalf("tools_used %s", tools)
	}
}

// A hosted upstream server's tools are server tools.
func TestHostedUpstreamServer(t *testing.T) {
	g := startWithFixture(t)
	s := g.Connect(t, g.Key, false)
	a := gatewaytest.Execute(t, s, wire.ExecuteRequest{Code: `return await mcp.fx.echo({ text: "hi" })`})
	if a.Status != wire.StatusSuccess || string(a.Result) != `"hi"` {
		t.Fatalf("%+v", a)
	}
	// A tool error reaches the code as a catchable exception.
	a = gatewaytest.Execute(t, s, wire.ExecuteRequest{Code: `
		try { await mcp.fx.fail({ message: "nope" }); } catch (e) { return "caught " + e.message; }`})
	if a.Status != wire.StatusSuccess || !strings.Contains(string(a.Result), "caught") {
		t.Fatalf("%+v", a)
	}
	// Uncaught, it is TOOL_ERROR.
	wantError(t, gatewaytest.Execute(t, s, wire.ExecuteRequest{Code: `await mcp.fx.fail({ message: "nope" })`}), pmlerr.ToolError)
	// A tool call that hangs is RPC_TIMEOUT.
	wantError(t, gatewaytest.Execute(t, s, wire.ExecuteRequest{Code: `return await mcp.fx.hang({})`}), pmlerr.RPCTimeout)
	alive(t, s)
}

// Client tools with the package header.
func TestClientToolsWithPackageExecuteLocally(t *testing.T) {
	g := startWithFixture(t)
	s := g.Connect(t, g.Key, true)
	code := `const content = await mcp.filesystem.read_file({ path: "/tmp/data.json" });
const parsed = await mcp.json.parse({ data: content });
return parsed;`
	a := gatewaytest.Execute(t, s, wire.ExecuteRequest{Code: code})
	if a.Status != wire.StatusExecuteLocally {
		t.Fatalf("status %s: %s", a.Status, a.Error)
	}
	if a.Code != code || a.WorkflowID == "" || a.CodeHash != wire.CodeHash(code) || !strings.HasPrefix(a.CodeHash, "sha256-") {
		t.Fatalf("code/code_hash/workflow missing: %+v", a)
	}
	if len(a.ClientTools) != 1 || a.ClientTools[0] != "filesystem:read_file" {
		t.Fatalf("client_tools %v", a.ClientTools)
	}
	if a.DAG == nil || len(a.DAG.Tasks) != 2 || a.DAG.Tasks[1].Layer != 1 || a.DAG.Tasks[1].DependsOn[0] != a.DAG.Tasks[0].ID {
		t.Fatalf("dag %+v", a.DAG)
	}
	refs, _ := json.Marshal(a.ToolsUsed)
	if !strings.Contains(string(refs), `"id":"filesystem:read_file"`) || !strings.Contains(string(refs), `"routing":"server"`) {
		t.Fatalf("tools_used %s", refs)
	}
}

// Client tools without the package are a clear error.
func TestClientToolsWithoutPackage(t *testing.T) {
	g := startWithFixture(t)
	s := g.Connect(t, g.Key, false)
	a := gatewaytest.Execute(t, s, wire.ExecuteRequest{Code: `return await mcp.filesystem.read_file({ path: "x" })`})
	wantError(t, a, pmlerr.ClientToolsRequirePackage)
	if !strings.Contains(a.Error, "pml") || a.Details["install_command"] == nil || len(a.ClientTools) != 1 {
		t.Fatalf("no install instructions: %+v", a)
	}
	// A dynamic access cannot be proved server-safe.
	if want := "this code uses tools that must run on your machine (filesystem:read_file), so it must run in the PML package; call it through the package. Install: " +
		gateway.InstallCommand; a.Error != want || a.Details["dynamic"] != false {
		t.Fatalf("message %q, want %q (details %v)", a.Error, want, a.Details)
	}
	// A dynamic access cannot be proved server-safe, and the message says so
	// rather than listing no tools.
	a = gatewaytest.Execute(t, s, wire.ExecuteRequest{Code: `const ns = "json"; return await mcp[ns].parse({data: "1"})`})
	wantError(t, a, pmlerr.ClientToolsRequirePackage)
	if want := "this code reaches a tool by a computed name (mcp[x]), which cannot be checked before it runs, so it must run in the PML package; call it through the package. Install: " +
		gateway.InstallCommand; a.Error != want || a.Details["dynamic"] != true {
		t.Fatalf("message %q, want %q (details %v)", a.Error, want, a.Details)
	}
	alive(t, s)
}

// The bad-input list: each gets its code and the gateway serves the next request.
func TestBadInputs(t *testing.T) {
	g := startWithFixture(t)
	s := g.Connect(t, g.Key, true)
	cases := []struct {
		name string
		req  wire.ExecuteRequest
		code pmlerr.Code
	}{
		{"empty", wire.ExecuteRequest{Code: "  \n "}, pmlerr.EmptyCode},
		{"too large", wire.ExecuteRequest{Code: "return 1;//" + strings.Repeat("x", 100*1024)}, pmlerr.CodeTooLarge},
		{"syntax", wire.ExecuteRequest{Code: "const a: number = 1;\nreturn a +;"}, pmlerr.SyntaxError},
		{"unknown server tool", wire.ExecuteRequest{Code: "return await mcp.json.parsee({data: '1'})"}, pmlerr.UnknownTool},
		{"timeout", wire.ExecuteRequest{Code: "while (true) {}", Options: &wire.ExecuteOptions{TimeoutMS: 200}}, pmlerr.ExecutionTimeout},
		{"memory", wire.ExecuteRequest{Code: "const a = []; while (true) a.push('x'.repeat(1e6));"}, pmlerr.MemoryLimit},
		{"throws", wire.ExecuteRequest{Code: "const x = 1;\nthrow new Error('boom');"}, pmlerr.CodeError},
		{"not serializable", wire.ExecuteRequest{Code: "return () => 1"}, pmlerr.CodeError},
		{"continue unknown workflow", wire.ExecuteRequest{ContinueWorkflow: &wire.ContinueWorkflow{WorkflowID: "nope", Approved: wire.Bool(true)}}, pmlerr.WorkflowNotFound},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := gatewaytest.Execute(t, s, c.req)
			wantError(t, a, c.code)
			switch c.code {
			case pmlerr.SyntaxError:
				if a.Details["line"] != float64(2) || a.Details["column"] == nil {
					t.Fatalf("syntax error position: %+v", a.Details)
				}
			case pmlerr.UnknownTool:
				if !strings.Contains(a.Error, "json:parse") {
					t.Fatalf("no nearest tool named: %s", a.Error)
				}
			case pmlerr.CodeError:
				if c.name == "throws" && (a.Details["line"] != float64(2) || !strings.Contains(a.Error, "boom")) {
					t.Fatalf("code error: %s %+v", a.Error, a.Details)
				}
			}
			alive(t, s)
		})
	}
	// Garbled arguments.
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "execute", Arguments: map[string]any{"code": 42}})
	if err != nil {
		t.Fatal(err)
	}
	wantError(t, gatewaytest.DecodeAnswer(t, res), pmlerr.InvalidRequest)
	alive(t, s)
}

func TestCallAndDiscover(t *testing.T) {
	g := startWithFixture(t)
	s := g.Connect(t, g.Key, true)
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "call", Arguments: map[string]any{"tool": "json:parse", "args": map[string]any{"data": `{"ok":true}`}}})
	if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != `{"ok":true}` {
		t.Fatalf("call: %v %+v", err, res)
	}
	// A client tool is not callable on the gateway.
	res, err = s.CallTool(context.Background(), &mcp.CallToolParams{Name: "call", Arguments: map[string]any{"tool": "filesystem:read_file", "args": map[string]any{"path": "/etc/passwd"}}})
	if err != nil {
		t.Fatal(err)
	}
	wantError(t, gatewaytest.DecodeAnswer(t, res), pmlerr.PermissionDenied)
	// Argument validation is TOOL_ERROR naming the field.
	res, _ = s.CallTool(context.Background(), &mcp.CallToolParams{Name: "call", Arguments: map[string]any{"tool": "math:add", "args": map[string]any{"a": "x", "b": 1}}})
	if a := gatewaytest.DecodeAnswer(t, res); a.ErrorCode != pmlerr.ToolError || !strings.Contains(a.Error, "a") ||
		a.Details["declaration"] != "mcp.math.add(args: { a: number; b: number }): Promise<number>" {
		t.Fatalf("validation: %+v", a)
	}

	res, err = s.CallTool(context.Background(), &mcp.CallToolParams{Name: "discover", Arguments: map[string]any{"query": "sha256 digest of a string", "limit": 3, "schemas": true}})
	if err != nil || res.IsError {
		t.Fatalf("discover: %v %+v", err, res)
	}
	var d wire.DiscoverAnswer
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Tools) == 0 || d.Tools[0].ID != "crypto:sha256" || !strings.Contains(d.Tools[0].Declaration, "mcp.crypto.sha256(") || d.Tools[0].InputSchema == nil {
		t.Fatalf("discover ranking: %+v", d.Tools)
	}
	// A built-in says what it returns (docs/how-it-works.md "Typed answers").
	if string(d.Tools[0].OutputSchema) != `{"type":"string"}` || !strings.HasSuffix(d.Tools[0].Declaration, "): Promise<string>") {
		t.Fatalf("built-in's output: %s, %s", d.Tools[0].OutputSchema, d.Tools[0].Declaration)
	}
	res, err = s.CallTool(context.Background(), &mcp.CallToolParams{Name: "discover", Arguments: map[string]any{"query": "sha256 digest of a string", "limit": 3}})
	if err != nil || res.IsError {
		t.Fatalf("compact discover: %v %+v", err, res)
	}
	var compact wire.DiscoverAnswer
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &compact); err != nil {
		t.Fatal(err)
	}
	// A search answers compact hits: no schema, the description not
	// repeated as the declaration's comment, which schemas: true keeps.
	if len(compact.Tools) == 0 || compact.Tools[0].InputSchema != nil || !strings.HasPrefix(compact.Tools[0].Declaration, "mcp.crypto.sha256(") ||
		!strings.HasPrefix(d.Tools[0].Declaration, "/** ") || !strings.HasSuffix(compact.Tools[0].Declaration, "): Promise<string>") {
		t.Fatalf("compact discover: %+v, full %+v", compact.Tools, d.Tools)
	}
	res, _ = s.CallTool(context.Background(), &mcp.CallToolParams{Name: "discover", Arguments: map[string]any{"pattern": "fx:*", "limit": 50}})
	if !strings.Contains(res.Content[0].(*mcp.TextContent).Text, `"fx:echo"`) {
		t.Fatalf("hosted tools not discoverable: %s", res.Content[0].(*mcp.TextContent).Text)
	}
}

func TestHTTPSurface(t *testing.T) {
	g := startWithFixture(t)
	post := func(body []byte, hdr map[string]string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, g.URL+"/mcp", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	ping := []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`)
	if r := post(ping, nil); r.StatusCode != http.StatusUnauthorized {
		t.Fatalf("no key: %d", r.StatusCode)
	}
	if r := post(ping, map[string]string{"Authorization": "Bearer pml_wrong"}); r.StatusCode != http.StatusUnauthorized {
		t.Fatalf("bad key: %d", r.StatusCode)
	}
	if r := post(ping, map[string]string{"x-api-key": g.Key}); r.StatusCode != http.StatusOK {
		t.Fatalf("x-api-key: %d", r.StatusCode)
	}
	big := append([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"execute","arguments":{"code":"`), bytes.Repeat([]byte("x"), wire.MaxRequestBytes)...)
	if r := post(big, map[string]string{"Authorization": "Bearer " + g.Key}); r.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("oversized: %d", r.StatusCode)
	}
	alive(t, g.Connect(t, g.Key, false))

	get := func(path, etag string) *http.Response {
		req, _ := http.NewRequest(http.MethodGet, g.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+g.Key)
		if etag != "" {
			req.Header.Set("If-None-Match", etag)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	r := get("/api/v1/routing", "")
	body, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if r.StatusCode != 200 || r.Header.Get("ETag") == "" || !strings.Contains(string(body), `"fx"`) || !strings.Contains(string(body), `"filesystem"`) {
		t.Fatalf("routing: %d %s", r.StatusCode, body)
	}
	if r2 := get("/api/v1/routing", r.Header.Get("ETag")); r2.StatusCode != http.StatusNotModified {
		t.Fatalf("routing revalidation: %d", r2.StatusCode)
	}
	if r := get("/healthz", ""); r.StatusCode != 200 {
		t.Fatalf("healthz %d", r.StatusCode)
	}
	// Metrics are the operator's, on their own listener: not served here,
	// with or without a key.
	for _, key := range []string{g.Key, ""} {
		req, _ := http.NewRequest(http.MethodGet, g.URL+"/metrics", nil)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound || strings.Contains(string(body), "pml_executions_total") {
			t.Fatalf("public /metrics (key %v): HTTP %d", key != "", resp.StatusCode)
		}
	}
	resp, err := http.Get(g.MetricsURL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "pml_executions_total") || !strings.Contains(string(body), "pml_execution_duration_seconds") {
		t.Fatalf("metrics missing series")
	}
	if r := get("/healthz", ""); r.StatusCode != 200 {
		t.Fatalf("the gateway stopped serving: %d", r.StatusCode)
	}
}
