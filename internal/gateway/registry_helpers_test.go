package gateway_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/upstream"
	"github.com/pml-go/pml/internal/wire"
)

// startRegistry runs a gateway with a catalog stdio server and a hosted
// http server that needs the caller's key (so nothing ever connects to it).
func startRegistry(t testing.TB) *gatewaytest.Gateway {
	t.Helper()
	return gatewaytest.Start(t, gateway.Options{Config: gateway.FileConfig{Servers: map[string]gateway.ServerEntry{
		"serena": {ServerConfig: upstream.ServerConfig{Command: "npx", Args: []string{"@example/serena"},
			Env: map[string]string{"SERENA_KEY": "${SERENA_KEY}"}}, Description: "Code analysis"},
		"tavily": {ServerConfig: upstream.ServerConfig{Type: "http", URL: "http://127.0.0.1:1/mcp/${TAVILY_API_KEY}"},
			Hosted: true, Description: "Web search"},
	}}})
}

// noRedirect is an HTTP client that shows 302s instead of following them.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

type response struct {
	status int
	header http.Header
	body   []byte
}

// get sends GET path with the key and extra headers (name, value pairs).
func get(t testing.TB, g *gatewaytest.Gateway, key, path string, headers ...string) response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, g.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: body}
}

func (r response) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("HTTP %d body is not a JSON object: %v: %s", r.status, err, r.body)
	}
	return m
}

// callTool calls a gateway tool and returns its one text and isError.
func callTool(t testing.TB, s *mcp.ClientSession, name string, args any) (string, bool) {
	t.Helper()
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res.Content[0].(*mcp.TextContent).Text, res.IsError
}

// admin calls the admin tool; a failure is decoded as an error answer.
func admin(t testing.TB, s *mcp.ClientSession, req wire.AdminRequest) (gateway.AdminAnswer, wire.Answer) {
	t.Helper()
	text, isErr := callTool(t, s, "admin", req)
	var out gateway.AdminAnswer
	var failed wire.Answer
	if isErr {
		if err := json.Unmarshal([]byte(text), &failed); err != nil {
			t.Fatal(err)
		}
		return out, failed
	}
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		t.Fatal(err)
	}
	return out, failed
}

// learn runs server-side code with an intent and returns the capability it
// was saved as.
func learn(t testing.TB, s *mcp.ClientSession, code, intent string) wire.CapabilityRef {
	t.Helper()
	a := gatewaytest.Execute(t, s, wire.ExecuteRequest{Code: code, Intent: intent})
	if a.Status != wire.StatusSuccess || a.Capability == nil {
		t.Fatalf("execute %q: %+v", code, a)
	}
	return *a.Capability
}
