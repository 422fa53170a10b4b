package gateway_test

import (
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
	"github.com/pml-go/pml/internal/httpserve"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/testfixture"
	"github.com/pml-go/pml/internal/tokenauth"
	"github.com/pml-go/pml/internal/wire"
)

// oauthGateway is a gateway trusting a real OpenID provider, whose tokens
// map to acme/web (member dev, viewer reader) and initech/x (member rival).
func oauthGateway(t *testing.T) (*gatewaytest.Gateway, *testfixture.OIDCProvider) {
	t.Helper()
	p := testfixture.StartOIDCProvider(t)
	g := gatewaytest.StartAt(t, func(base string) gateway.Options {
		resource := base + "/mcp"
		for _, c := range []testfixture.OIDCClient{
			{ID: "dev", Secret: "s1", Audience: resource, Claims: map[string]any{"groups": []string{"acme-web"}}},
			{ID: "reader", Secret: "s2", Audience: resource, Claims: map[string]any{"groups": []string{"acme-web-read"}}},
			{ID: "rival", Secret: "s3", Audience: resource, Claims: map[string]any{"groups": []string{"initech"}}},
			{ID: "elsewhere", Secret: "s4", Audience: "https://other.invalid/mcp", Claims: map[string]any{"groups": []string{"acme-web"}}},
			{ID: "stranger", Secret: "s5", Audience: resource, Claims: map[string]any{"groups": []string{"nobody"}}},
			{ID: "ops", Secret: "s6", Audience: resource, Claims: map[string]any{"groups": []string{"sre"}}},
			{ID: "lead", Secret: "s7", Audience: resource, Claims: map[string]any{"groups": []string{"acme-web-lead"}}},
		} {
			p.AddClient(c)
		}
		return gateway.Options{Config: gateway.FileConfig{OAuth: &tokenauth.Config{Resource: resource, Issuers: []tokenauth.Issuer{{
			Issuer: p.Issuer, RequiredScopes: []string{"pml"},
			Tenants: []tokenauth.TenantRule{
				{Claim: "groups", Value: "acme-web", Org: "acme", Project: "web", Role: tokenauth.RoleMember},
				{Claim: "groups", Value: "acme-web-read", Org: "acme", Project: "web", Role: tokenauth.RoleViewer},
				{Claim: "groups", Value: "initech", Org: "initech", Project: "x", Role: tokenauth.RoleMember},
				{Claim: "groups", Value: "sre", Org: "*", Project: "*", Role: tokenauth.RoleAdmin},
				{Claim: "groups", Value: "acme-web-lead", Org: "acme", Project: "web", Role: tokenauth.RoleAdmin},
			},
		}}}}}
	}, httpserve.Limits{})
	return g, p
}

func request(t *testing.T, method, url, token, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if method == http.MethodPost {
		req.Header.Set("Accept", "application/json, text/event-stream")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

const toolsList = `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`

// A client that follows the MCP authorization spec finds where to sign in
// from the 401, and a token of a trusted issuer runs code in its tenant.
func TestOAuthTokenRunsCode(t *testing.T) {
	g, p := oauthGateway(t)
	resp, _ := request(t, http.MethodPost, g.URL+"/mcp", "", toolsList)
	challenge := resp.Header.Get("WWW-Authenticate")
	metaURL := g.URL + "/.well-known/oauth-protected-resource/mcp"
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(challenge, `resource_metadata="`+metaURL+`"`) || !strings.Contains(challenge, `scope="pml"`) {
		t.Fatalf("no credentials: %d %q", resp.StatusCode, challenge)
	}
	resp, body := request(t, http.MethodGet, metaURL, "", "")
	var meta struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
		Scopes               []string `json:"scopes_supported"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal([]byte(body), &meta) != nil || meta.Resource != g.URL+"/mcp" ||
		len(meta.AuthorizationServers) != 1 || meta.AuthorizationServers[0] != p.Issuer || len(meta.Scopes) != 1 {
		t.Fatalf("protected resource metadata: %d %s", resp.StatusCode, body)
	}

	s := g.ConnectWith(t, p.Token(t, "dev", "pml"), http.Header{})
	a := gatewaytest.Execute(t, s, wire.ExecuteRequest{Code: `return await mcp.math.add({a: 1, b: 2})`})
	if a.Status != wire.StatusSuccess {
		t.Fatalf("execute with a token: %+v", a)
	}
	// The run is the tenant's: the project's key sees its trace.
	if resp, body := request(t, http.MethodGet, g.URL+"/api/traces/"+a.TraceID, g.Key, ""); resp.StatusCode != http.StatusOK {
		t.Fatalf("the token's run, read with the project's key: %d %s", resp.StatusCode, body)
	}
	// No issuer has a web client here: the page is told to use a key.
	if resp, body := request(t, http.MethodGet, g.URL+"/api/auth/web", "", ""); resp.StatusCode != http.StatusNotFound || !strings.Contains(body, "API key") {
		t.Fatalf("web sign-in without a web client: %d %s", resp.StatusCode, body)
	}
	// The API key keeps working beside tokens.
	if a := gatewaytest.Execute(t, g.Connect(t, g.Key, false), wire.ExecuteRequest{Code: `return 1`}); a.Status != wire.StatusSuccess {
		t.Fatalf("execute with the key: %+v", a)
	}
}

// Each bad token gets its status and error, and the next good request is
// served.
func TestOAuthRefusals(t *testing.T) {
	g, p := oauthGateway(t)
	good := p.Token(t, "dev", "pml")
	second := testfixture.StartOIDCProvider(t)
	second.AddClient(testfixture.OIDCClient{ID: "dev", Secret: "x", Audience: g.URL + "/mcp", Claims: map[string]any{"groups": []string{"acme-web"}}})
	cases := []struct {
		name   string
		token  string
		status int
		errTag string
	}{
		{"wrong audience", p.Token(t, "elsewhere", "pml"), http.StatusUnauthorized, `"error":"unauthorized"`},
		{"wrong issuer", second.Token(t, "dev", "pml"), http.StatusUnauthorized, `"error":"unauthorized"`},
		{"missing scope", p.Token(t, "dev"), http.StatusForbidden, `"error":"insufficient_scope"`},
		{"no tenant", p.Token(t, "stranger", "pml"), http.StatusForbidden, `"error":"no_tenant"`},
		{"garbage", "a.b.c", http.StatusUnauthorized, `"error":"unauthorized"`},
		{"unknown key", "pml_0000", http.StatusUnauthorized, `"error":"unauthorized"`},
	}
	for _, c := range cases {
		resp, body := request(t, http.MethodPost, g.URL+"/mcp", c.token, toolsList)
		if resp.StatusCode != c.status || !strings.Contains(body, c.errTag) {
			t.Errorf("%s: %d %s", c.name, resp.StatusCode, body)
		}
		if c.status == http.StatusForbidden && c.errTag == `"error":"insufficient_scope"` && !strings.Contains(resp.Header.Get("WWW-Authenticate"), `error="insufficient_scope"`) {
			t.Errorf("%s: challenge %q", c.name, resp.Header.Get("WWW-Authenticate"))
		}
		if resp, body := request(t, http.MethodPost, g.URL+"/mcp", good, toolsList); resp.StatusCode != http.StatusOK {
			t.Fatalf("after %s, a good token: %d %s", c.name, resp.StatusCode, body)
		}
	}
}

// A viewer reads but does not run; a member of another tenant sees none of
// this tenant's traces, whichever kind of credential made them.
func TestOAuthRolesAndTenants(t *testing.T) {
	g, p := oauthGateway(t)
	dev := g.ConnectWith(t, p.Token(t, "dev", "pml"), http.Header{})
	a := gatewaytest.Execute(t, dev, wire.ExecuteRequest{Code: `return await mcp.math.add({a: 2, b: 2})`})
	if a.Status != wire.StatusSuccess {
		t.Fatalf("member: %+v", a)
	}
	reader := p.Token(t, "reader", "pml")
	if resp, body := request(t, http.MethodPost, g.URL+"/mcp", reader, toolsList); resp.StatusCode != http.StatusForbidden || !strings.Contains(body, `"error":"forbidden"`) {
		t.Fatalf("a viewer runs MCP: %d %s", resp.StatusCode, body)
	}
	for _, path := range []string{"/api/traces", "/api/traces/" + a.TraceID, "/api/dashboard", "/mcp?limit=10"} {
		if resp, body := request(t, http.MethodGet, g.URL+path, reader, ""); resp.StatusCode != http.StatusOK {
			t.Errorf("a viewer reads %s: %d %s", path, resp.StatusCode, body)
		}
	}
	if resp, _ := request(t, http.MethodPost, g.URL+"/api/traces", reader, `{"traces":[]}`); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a viewer posts traces: %d", resp.StatusCode)
	}
	// A member may not widen a capability's visibility; the key (the
	// project's admin) may.
	learn := gatewaytest.Execute(t, dev, wire.ExecuteRequest{Code: `const s = await mcp.math.add({a: 1, b: 2}); return await mcp.math.add({a: s, b: 3})`, Intent: "add three"})
	if learn.Capability == nil {
		t.Fatalf("learning: %+v", learn)
	}
	admin := func(s *mcp.ClientSession) *mcp.CallToolResult {
		res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "admin", Arguments: map[string]any{
			"action": "visibility", "target": learn.Capability.Name, "visibility": "public"}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := admin(dev); !res.IsError {
		t.Errorf("a member made a capability public")
	}
	if res := admin(g.Connect(t, g.Key, false)); res.IsError {
		t.Errorf("the project's key could not: %+v", res.Content)
	}
	// Another tenant's member sees nothing of acme/web.
	rival := p.Token(t, "rival", "pml")
	if resp, _ := request(t, http.MethodGet, g.URL+"/api/traces/"+a.TraceID, rival, ""); resp.StatusCode != http.StatusNotFound {
		t.Errorf("another tenant reads the trace: %d", resp.StatusCode)
	}
	if resp, body := request(t, http.MethodGet, g.URL+"/api/traces", rival, ""); resp.StatusCode != http.StatusOK || strings.Contains(body, a.TraceID) {
		t.Errorf("another tenant's list: %d %s", resp.StatusCode, body)
	}
}

// Every trace records its caller: the token's subject or the key's id; a
// package's trace records who posted it, whatever it claims; the list
// filters by caller.
func TestTracesRecordTheirCaller(t *testing.T) {
	g, p := oauthGateway(t)
	byToken := gatewaytest.Execute(t, g.ConnectWith(t, p.Token(t, "dev", "pml"), http.Header{}), wire.ExecuteRequest{Code: `return 1`})
	byKey := gatewaytest.Execute(t, g.Connect(t, g.Key, false), wire.ExecuteRequest{Code: `return 2`})
	if byToken.Status != wire.StatusSuccess || byKey.Status != wire.StatusSuccess {
		t.Fatalf("runs: %+v %+v", byToken, byKey)
	}
	forged := `{"traces":[{"trace_id":"0123456789abcdef0123456789abcdef","workflow_id":"w","caller":"oidc:idp.invalid:ceo","success":true,"duration_ms":1,"started_at":"` + time.Now().UTC().Format(time.RFC3339) + `","tasks":[],"decisions":[]}]}`
	if resp, body := request(t, http.MethodPost, g.URL+"/api/traces", p.Token(t, "dev", "pml"), forged); resp.StatusCode != http.StatusOK {
		t.Fatalf("posting a trace: %d %s", resp.StatusCode, body)
	}
	callerOf := func(id string) string {
		resp, body := request(t, http.MethodGet, g.URL+"/api/traces/"+id, g.Key, "")
		var node struct {
			Trace struct {
				Caller string `json:"caller"`
			} `json:"trace"`
		}
		if resp.StatusCode != http.StatusOK || json.Unmarshal([]byte(body), &node) != nil {
			t.Fatalf("trace %s: %d %s", id, resp.StatusCode, body)
		}
		return node.Trace.Caller
	}
	dev := p.Caller("dev")
	if got := callerOf(byToken.TraceID); got != dev {
		t.Errorf("a token's run: caller %q, want %q", got, dev)
	}
	if got := callerOf(byKey.TraceID); !strings.HasPrefix(got, "key:") {
		t.Errorf("a key's run: caller %q", got)
	}
	if got := callerOf("0123456789abcdef0123456789abcdef"); got != dev {
		t.Errorf("a posted trace claiming another caller: %q, want %q", got, dev)
	}
	resp, body := request(t, http.MethodGet, g.URL+"/api/traces?caller="+dev, g.Key, "")
	var page struct {
		Total int `json:"total"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal([]byte(body), &page) != nil || page.Total != 2 {
		t.Errorf("filtered by caller: %d %s", resp.StatusCode, body)
	}
}

// An operator (a rule mapping to every tenant) reads the dashboard of all
// tenants summed, and nothing else: it runs nothing and reads no trace.
func TestOperatorSeesEveryTenantsDashboardOnly(t *testing.T) {
	g, p := oauthGateway(t)
	for _, client := range []string{"dev", "rival"} {
		s := g.ConnectWith(t, p.Token(t, client, "pml"), http.Header{})
		if a := gatewaytest.Execute(t, s, wire.ExecuteRequest{Code: `return await mcp.math.add({a: 1, b: 1})`}); a.Status != wire.StatusSuccess {
			t.Fatalf("%s: %+v", client, a)
		}
	}
	ops := p.Token(t, "ops", "pml")
	resp, body := request(t, http.MethodGet, g.URL+"/api/dashboard?range=1h", ops, "")
	var d gateway.Dashboard
	if resp.StatusCode != http.StatusOK || json.Unmarshal([]byte(body), &d) != nil || !d.AllTenants || d.Totals.Executions != 2 {
		t.Fatalf("operator dashboard: %d %s", resp.StatusCode, body)
	}
	resp, body = request(t, http.MethodGet, g.URL+"/api/dashboard?range=1h", p.Token(t, "dev", "pml"), "")
	d = gateway.Dashboard{}
	if err := json.Unmarshal([]byte(body), &d); err != nil || resp.StatusCode != http.StatusOK || d.AllTenants || d.Totals.Executions != 1 {
		t.Fatalf("a member's dashboard: %d %s", resp.StatusCode, body)
	}
	for _, c := range []struct{ method, path, body string }{
		{http.MethodPost, "/mcp", toolsList}, {http.MethodGet, "/api/traces", ""}, {http.MethodPost, "/api/traces", `{"traces":[]}`},
	} {
		if resp, body := request(t, c.method, g.URL+c.path, ops, c.body); resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "operator") {
			t.Errorf("operator %s %s: %d %s", c.method, c.path, resp.StatusCode, body)
		}
	}
}

// A project's admin manages its keys over HTTP: lists them (never their
// secrets), creates one (its secret in that answer only) that then works,
// deletes one, which then stops working; a member may not, and another
// project's key is not found.
func TestAdminManagesKeys(t *testing.T) {
	g, p := oauthGateway(t)
	lead := p.Token(t, "lead", "pml")
	if resp, body := request(t, http.MethodGet, g.URL+"/api/keys", p.Token(t, "dev", "pml"), ""); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a member lists keys: %d %s", resp.StatusCode, body)
	}
	resp, body := request(t, http.MethodPost, g.URL+"/api/keys", lead, "")
	var created struct{ ID, Key string }
	if resp.StatusCode != http.StatusCreated || json.Unmarshal([]byte(body), &created) != nil || !strings.HasPrefix(created.Key, "pml_") || resp.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("create: %d %s", resp.StatusCode, body)
	}
	if a := gatewaytest.Execute(t, g.Connect(t, created.Key, false), wire.ExecuteRequest{Code: `return 1`}); a.Status != wire.StatusSuccess {
		t.Fatalf("the new key: %+v", a)
	}
	resp, body = request(t, http.MethodGet, g.URL+"/api/keys", lead, "")
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, created.ID) || strings.Contains(body, created.Key) || strings.Contains(body, "pml_") {
		t.Fatalf("list: %d %s", resp.StatusCode, body)
	}
	initech := store.Scope{Org: "initech", Project: "x"}
	otherKey := g.NewKey(t, initech)
	others, err := g.Service.Store().ListKeys(t.Context(), initech)
	if err != nil || len(others) != 1 {
		t.Fatalf("initech's keys: %v %v", others, err)
	}
	for _, id := range []string{"no-such-key", others[0].ID} {
		if resp, _ := request(t, http.MethodDelete, g.URL+"/api/keys/"+id, lead, ""); resp.StatusCode != http.StatusNotFound {
			t.Fatalf("delete %s: %d", id, resp.StatusCode)
		}
	}
	if resp, _ := request(t, http.MethodPost, g.URL+"/mcp", otherKey, toolsList); resp.StatusCode != http.StatusOK {
		t.Fatalf("another project's key stopped working: %d", resp.StatusCode)
	}
	if resp, body := request(t, http.MethodDelete, g.URL+"/api/keys/"+created.ID, lead, ""); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("delete: %d %s", resp.StatusCode, body)
	}
	if resp, _ := request(t, http.MethodPost, g.URL+"/mcp", created.Key, toolsList); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a deleted key: %d", resp.StatusCode)
	}
	if resp, _ := request(t, http.MethodGet, g.URL+"/api/keys", lead, ""); resp.StatusCode != http.StatusOK {
		t.Fatalf("the next request: %d", resp.StatusCode)
	}
}

// A key cannot stand for every tenant: only an operator's token does.
func TestKeysNameAProject(t *testing.T) {
	g := gatewaytest.Start(t, gateway.Options{})
	for _, sc := range []store.Scope{store.AllTenants, {Org: "acme", Project: "*"}, {Org: "*", Project: "web"}} {
		if _, err := gateway.CreateKey(t.Context(), g.Service.Store(), sc); err == nil || !strings.Contains(err.Error(), "every tenant") {
			t.Errorf("a key for %v: %v", sc, err)
		}
	}
}
