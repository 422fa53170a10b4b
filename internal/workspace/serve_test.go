package workspace

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/wire"
)

// connectServe opens an MCP session to a `pml serve` endpoint, sending
// headers with every request.
func connectServe(endpoint string, h http.Header) (*mcp.ClientSession, error) {
	return mcp.NewClient(&mcp.Implementation{Name: "ai-client", Version: "0"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: gatewaytest.HTTPClient(h)}, nil)
}

func bearer(token string) http.Header { return http.Header{"Authorization": {"Bearer " + token}} }

// The package's HTTP endpoint runs tools only for its own client: a foreign
// Origin is 403 and a missing or wrong token 401, and neither runs a tool;
// the right token (and the server's own loopback origin) works.
func TestServeRefusesForeignOriginsAndMissingTokens(t *testing.T) {
	e := newApprovalEnv(t, `{"permissions": {"allow": ["*"]}}`, nil)
	token, err := ServeToken(e.ws)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(e.pkg.HTTPHandler(ServeOptions{Token: token}))
	defer srv.Close()
	endpoint := srv.URL + "/mcp"
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())

	s, err := connectServe(endpoint, bearer(token))
	if err != nil {
		t.Fatalf("the AI client with the token: %v", err)
	}
	defer s.Close()

	ran := filepath.Join(e.ws, "ran.txt")
	call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"execute","arguments":{"code":"await mcp.filesystem.write_file({path: \"ran.txt\", content: \"x\"}); return await mcp.filesystem.read_file({path: \".env\"})"}}}`
	post := func(h http.Header) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(call))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", s.ID())
		for k, v := range h {
			req.Header[k] = v
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	withOrigin := func(origin string) http.Header {
		h := bearer(token)
		h.Set("Origin", origin)
		return h
	}
	refused := []struct {
		name   string
		h      http.Header
		status int
	}{
		{"foreign origin", withOrigin("http://evil.invalid"), http.StatusForbidden},
		{"foreign origin on our port", withOrigin("http://evil.invalid:" + port), http.StatusForbidden},
		{"loopback, another port", withOrigin("http://127.0.0.1:1"), http.StatusForbidden},
		{"https loopback", withOrigin("https://127.0.0.1:" + port), http.StatusForbidden},
		{"opaque origin", withOrigin("null"), http.StatusForbidden},
		{"no token", http.Header{}, http.StatusUnauthorized},
		{"wrong token", bearer(strings.Repeat("0", serveTokenLen)), http.StatusUnauthorized},
		{"token with a tail", bearer(token + "x"), http.StatusUnauthorized},
		{"not a bearer", http.Header{"Authorization": {"Basic " + token}}, http.StatusUnauthorized},
		{"two tokens", http.Header{"Authorization": {"Bearer " + token + " " + token}}, http.StatusUnauthorized},
	}
	for _, c := range refused {
		resp := post(c.h)
		if resp.StatusCode != c.status {
			t.Fatalf("%s: HTTP %d, want %d", c.name, resp.StatusCode, c.status)
		}
		if c.status == http.StatusUnauthorized && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Fatalf("%s: WWW-Authenticate %q", c.name, resp.Header.Get("WWW-Authenticate"))
		}
		wantAbsent(t, ran, c.name+": a tool ran")
	}
	if _, err := connectServe(endpoint, nil); err == nil {
		t.Fatal("a client without the token connected")
	}

	// The same request from the server's own origin runs: the refusals
	// above were about the origin and the token, not the request.
	if resp := post(withOrigin("http://localhost:" + port)); resp.StatusCode != http.StatusOK {
		t.Fatalf("own origin: HTTP %d", resp.StatusCode)
	}
	if _, err := os.Stat(ran); err != nil {
		t.Fatalf("the accepted request did not run: %v", err)
	}
	// The scheme is case-insensitive (RFC 9110).
	s3, err := connectServe(endpoint, http.Header{"Authorization": {"bearer " + token}})
	if err != nil {
		t.Fatalf("lowercase scheme: %v", err)
	}
	_ = s3.Close()
	var got int
	wantLocalResult(t, callTool(t, s, `return 41 + 1`), &got)
	if got != 42 {
		t.Fatalf("session after the refusals: %d", got)
	}

	// --no-auth: no token needed; the origin check stays.
	open := httptest.NewServer(e.pkg.HTTPHandler(ServeOptions{}))
	defer open.Close()
	s2, err := connectServe(open.URL+"/mcp", nil)
	if err != nil {
		t.Fatalf("--no-auth: %v", err)
	}
	defer s2.Close()
	wantLocalResult(t, callTool(t, s2, `return 41 + 1`), &got)
	if _, err := connectServe(open.URL+"/mcp", http.Header{"Origin": {"http://evil.invalid"}}); err == nil {
		t.Fatal("--no-auth accepted a foreign origin")
	}
}

func callTool(t *testing.T, s *mcp.ClientSession, code string) wire.Answer {
	t.Helper()
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "execute", Arguments: wire.ExecuteRequest{Code: code}})
	if err != nil {
		t.Fatal(err)
	}
	return decodeResult(t, res)
}

// The token file is created once, private, complete, and shared by every
// caller; a token file others can read, or that is not a token, is refused.
func TestServeToken(t *testing.T) {
	ws := t.TempDir()
	var wg sync.WaitGroup
	tokens := make([]string, 8)
	errs := make([]error, 8)
	for i := range tokens {
		wg.Go(func() { tokens[i], errs[i] = ServeToken(ws) })
	}
	wg.Wait()
	for i := range tokens {
		if errs[i] != nil || tokens[i] != tokens[0] || len(tokens[i]) != serveTokenLen {
			t.Fatalf("caller %d: %q %v (first %q)", i, tokens[i], errs[i], tokens[0])
		}
	}
	path := filepath.Join(ws, StateDir, ServeTokenFile)
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v %v", fi.Mode(), err)
	}
	if leftovers, _ := filepath.Glob(path + ".tmp-*"); len(leftovers) != 0 {
		t.Fatalf("temp files left: %v", leftovers)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ServeToken(ws); err == nil || !strings.Contains(err.Error(), "0600") {
		t.Fatalf("world-readable token: %v", err)
	}
	if err := os.WriteFile(path, []byte("short\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ServeToken(ws); err == nil || !strings.Contains(err.Error(), "not a PML serve token") {
		t.Fatalf("garbage token: %v", err)
	}
	// A symlink to some other file is not a token file.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.WriteFile(target, []byte(strings.Repeat("a", serveTokenLen)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
	if _, err := ServeToken(ws); err == nil {
		t.Fatal("a symlinked token file was accepted")
	}
}

func decodeResult(t *testing.T, res *mcp.CallToolResult) wire.Answer {
	t.Helper()
	var a wire.Answer
	if len(res.Content) != 1 {
		t.Fatalf("%d content items", len(res.Content))
	}
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &a); err != nil {
		t.Fatal(err)
	}
	return a
}

func wantLocalResult(t *testing.T, a wire.Answer, v any) {
	t.Helper()
	wantStatus(t, a, wire.StatusSuccess)
	if err := json.Unmarshal(a.Result, v); err != nil {
		t.Fatalf("result %s: %v", a.Result, err)
	}
}

// pml init --http: the .mcp.json it writes holds the token, so it and any
// backup of it stay private and out of git; a port out of range is refused.
func TestInitHTTPKeepsTheTokenPrivate(t *testing.T) {
	ws := t.TempDir()
	o := InitOptions{Workspace: ws, Binary: "pml", HTTP: true, Port: 3003, Out: io.Discard}
	if err := Init(o); err != nil {
		t.Fatal(err)
	}
	mcpPath := filepath.Join(ws, ".mcp.json")
	data, err := os.ReadFile(mcpPath)
	if err != nil {
		t.Fatal(err)
	}
	token, err := ServeToken(ws)
	if err != nil || !strings.Contains(string(data), `"Bearer `+token+`"`) || !strings.Contains(string(data), `"http://127.0.0.1:3003/mcp"`) {
		t.Fatalf(".mcp.json: %v %s", err, data)
	}
	// The user adds a server next to pml; init --force moves it and backs the
	// token-bearing file up.
	withServer := strings.Replace(string(data), `"mcpServers": {`, `"mcpServers": {"docs": {"type": "http", "url": "https://docs.invalid/mcp"},`, 1)
	if err := os.WriteFile(mcpPath, []byte(withServer), 0o600); err != nil {
		t.Fatal(err)
	}
	o.Force = true
	if err := Init(o); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{mcpPath, mcpPath + ".bak"} {
		if fi, err := os.Stat(f); err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v %v", f, fi, err)
		}
	}
	ignore, _ := os.ReadFile(filepath.Join(ws, ".gitignore"))
	for _, e := range []string{".mcp.json", ".mcp.json.bak*", ".pml/"} {
		if !strings.Contains(string(ignore), "\n"+e+"\n") {
			t.Fatalf(".gitignore lacks %s:\n%s", e, ignore)
		}
	}
	if tok2, _ := ServeToken(ws); tok2 != token {
		t.Fatal("init --force changed the token")
	}
	o.Port = 70000
	if err := Init(o); err == nil || !strings.Contains(err.Error(), "--port") {
		t.Fatalf("port 70000: %v", err)
	}
}
