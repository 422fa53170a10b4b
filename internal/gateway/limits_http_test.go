package gateway_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/wire"
)

// Page sizes over a list endpoint's maximum are refused with 400, naming
// the bound; the endpoint keeps serving.
func TestListLimits(t *testing.T) {
	g := gatewaytest.Start(t, gateway.Options{})
	for _, c := range []struct{ path, message string }{
		{"/mcp?limit=99999999", `limit="99999999": want an integer from 1 to 200`},
		{"/mcp?limit=201", `limit="201": want an integer from 1 to 200`},
		{"/mcp?page=99999999999", `page="99999999999": want an integer from 1 to 1048576`},
		{"/api/traces?limit=99999999", `limit="99999999": want an integer from 1 to 200`},
		{"/api/traces?page=1048577", `page="1048577": want an integer from 1 to 1048576`},
	} {
		r := get(t, g, g.Key, c.path)
		if body := r.json(t); r.status != http.StatusBadRequest || body["error"] != "bad_request" || body["message"] != c.message {
			t.Errorf("GET %s: HTTP %d %s", c.path, r.status, r.body)
		}
		path, _, _ := strings.Cut(c.path, "?")
		if r := get(t, g, g.Key, path+"?limit=200"); r.status != http.StatusOK {
			t.Errorf("GET %s?limit=200 after the refusal: HTTP %d %s", path, r.status, r.body)
		}
	}
	var page struct{ Limit int }
	if err := json.Unmarshal(get(t, g, g.Key, "/mcp?limit=200").body, &page); err != nil || page.Limit != 200 {
		t.Fatalf("catalog at its maximum: %+v %v", page, err)
	}
}

func postClientTools(t *testing.T, g *gatewaytest.Gateway, client string, tools []store.ClientTool) (int, map[string]any) {
	t.Helper()
	body, err := json.Marshal(map[string]any{"client_id": client, "tools": tools})
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, g.URL+"/api/v1/client-tools", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+g.Key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if len(out) > 0 {
		if err := json.Unmarshal(out, &m); err != nil {
			t.Fatalf("HTTP %d: %s", resp.StatusCode, out)
		}
	}
	return resp.StatusCode, m
}

func clientTools(prefix string, n int) []store.ClientTool {
	out := make([]store.ClientTool, n)
	for i := range out {
		out[i] = store.ClientTool{ID: fmt.Sprintf("%s:t%03d", prefix, i), Description: "reported tool"}
	}
	return out
}

// discovered counts the tools discover lists for pattern.
func discovered(t *testing.T, s *mcp.ClientSession, pattern string) int {
	t.Helper()
	text, isErr := callTool(t, s, "discover", wire.DiscoverRequest{Pattern: pattern, Limit: 100000})
	var a wire.DiscoverAnswer
	if err := json.Unmarshal([]byte(text), &a); err != nil || isErr {
		t.Fatalf("discover %s: %s", pattern, text)
	}
	return len(a.Tools)
}

// Reports of client tools cannot grow a tenant's table without bound: a
// report replaces its client's last one, a report lists at most 500 tools,
// and a tenant keeps its 50 latest clients. Discover sees exactly that.
func TestClientToolReportsAreBounded(t *testing.T) {
	g := gatewaytest.Start(t, gateway.Options{})
	s := g.Connect(t, g.Key, false)
	for i := range 10 {
		if status, body := postClientTools(t, g, "laptop", clientTools("laptop", 400)); status != http.StatusNoContent {
			t.Fatalf("report %d: HTTP %d %v", i, status, body)
		}
	}
	if n := discovered(t, s, "laptop:*"); n != 400 {
		t.Fatalf("after ten reports of 400 tools from one client, discover lists %d", n)
	}

	status, body := postClientTools(t, g, "laptop", clientTools("laptop", store.MaxClientToolsPerReport+1))
	if status != http.StatusBadRequest || body["error"] != "bad_request" ||
		!strings.Contains(fmt.Sprint(body["message"]), "the report lists 501 tools; at most 500") {
		t.Fatalf("report of 501 tools: HTTP %d %v", status, body)
	}
	if n := discovered(t, s, "laptop:*"); n != 400 {
		t.Fatalf("after the refused report, discover lists %d", n)
	}
	if status, body := postClientTools(t, g, "", nil); status != http.StatusBadRequest || body["error"] != "bad_request" {
		t.Fatalf("report without a client id: HTTP %d %v", status, body)
	}

	for i := range store.MaxClientsPerScope + 10 {
		client := fmt.Sprintf("c%02d", i)
		if status, body := postClientTools(t, g, client, clientTools(client, 1)); status != http.StatusNoContent {
			t.Fatalf("client %s: HTTP %d %v", client, status, body)
		}
	}
	// laptop and the ten oldest of the others were evicted.
	if n := discovered(t, s, "laptop:*"); n != 0 {
		t.Errorf("the oldest client's %d tools are still listed", n)
	}
	total := 0
	for i := range store.MaxClientsPerScope + 10 {
		total += discovered(t, s, fmt.Sprintf("c%02d:*", i))
	}
	if total != store.MaxClientsPerScope {
		t.Errorf("discover lists the tools of %d clients, want %d", total, store.MaxClientsPerScope)
	}
	if status, _ := postClientTools(t, g, "laptop", clientTools("laptop", 3)); status != http.StatusNoContent {
		t.Fatalf("a report after the refusals: HTTP %d", status)
	}
}
