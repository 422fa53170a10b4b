package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/testfixture"
	"github.com/pml-go/pml/internal/wire"
)

// A hosted server behind OAuth: the gateway gets a token with its client
// credentials (the token endpoint found through the server's metadata),
// gets a new one when the server stops accepting it, and a wrong secret
// fails that server's calls only. Neither secret nor token is logged.
func TestHostedClientCredentials(t *testing.T) {
	as := testfixture.StartOAuthServer(t)
	dir := t.TempDir()
	testfixture.WriteFile(t, dir, "gateway.json", fmt.Sprintf(`{"servers": {
		"svc": {"type": "http", "url": %q, "hosted": true, "auth": {"type": "client_credentials", "client_id": %q, "client_secret": %q}},
		"wrong": {"url": %q, "hosted": true, "auth": {"type": "client_credentials", "client_id": %q, "client_secret": "not-the-secret"}}
	}}`, as.URL, as.ClientID, as.ClientSecret, as.URL, as.ClientID))
	cfg, err := gateway.LoadConfig(filepath.Join(dir, "gateway.json"))
	if err != nil {
		t.Fatal(err)
	}
	var logs syncWriter
	g := gatewaytest.Start(t, gateway.Options{Config: cfg, Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	s := g.Connect(t, g.Key, false)
	echo := func(text string) wire.Answer {
		return gatewaytest.Execute(t, s, wire.ExecuteRequest{Code: fmt.Sprintf(`return await mcp.svc.echo({text: %q})`, text)})
	}

	if a := echo("one"); a.Status != wire.StatusSuccess || !strings.Contains(string(a.Result), "one") {
		t.Fatalf("first call: %+v", a)
	}
	if n := as.Grants("client_credentials"); n != 1 {
		t.Fatalf("client credentials grants %d, want 1", n)
	}
	if a := echo("two"); a.Status != wire.StatusSuccess || as.Grants("client_credentials") != 1 {
		t.Fatalf("second call (token reused): %+v, grants %d", a, as.Grants("client_credentials"))
	}
	as.ExpireAccessTokens()
	if a := echo("three"); a.Status != wire.StatusSuccess || as.Grants("client_credentials") != 2 {
		t.Fatalf("after the server dropped the token: %+v, grants %d", a, as.Grants("client_credentials"))
	}

	a := gatewaytest.Execute(t, s, wire.ExecuteRequest{Code: `return await mcp.wrong.echo({text: "x"})`})
	if a.Status != wire.StatusError || a.ErrorCode != pmlerr.ToolError || !strings.Contains(a.Error, "invalid_client") {
		t.Fatalf("wrong secret: %+v", a)
	}
	if a := echo("four"); a.Status != wire.StatusSuccess {
		t.Fatalf("after the wrong server's failure: %+v", a)
	}

	for _, secret := range append(as.Issued(), as.ClientSecret) {
		if strings.Contains(logs.String(), secret) {
			t.Fatalf("a secret or token was logged:\n%s", logs.String())
		}
	}
}

// Bad auth shapes are INVALID_CONFIG naming the problem; unknown keys in
// the auth block are caught like any other.
func TestClientCredentialsConfigShapes(t *testing.T) {
	dir := t.TempDir()
	const url = `"url": "http://127.0.0.1:9/mcp"`
	for _, tc := range []struct{ server, want string }{
		{`{` + url + `, "hosted": true, "auth": {"type": "password", "client_id": "a", "client_secret": "b"}}`, `auth.type must be "client_credentials", not "password"`},
		{`{` + url + `, "hosted": true, "auth": {"type": "client_credentials", "client_secret": "b"}}`, `auth.client_id is required`},
		{`{` + url + `, "hosted": true, "auth": {"type": "client_credentials", "client_id": "a"}}`, `auth.client_secret is required`},
		{`{` + url + `, "auth": {"type": "client_credentials", "client_id": "a", "client_secret": "b"}}`, `auth needs "hosted": true`},
		{`{"type": "sse", "url": "http://127.0.0.1:9/sse", "hosted": true, "auth": {"type": "client_credentials", "client_id": "a", "client_secret": "b"}}`, `auth needs an http server, not sse`},
		{`{` + url + `, "hosted": true, "auth": {"type": "client_credentials", "client_id": "a", "client_secert": "b"}}`, `unknown key "servers.svc.auth.client_secert" (did you mean "client_secret"?)`},
		{`{` + url + `, "hosted": true, "auth": "oauth"}`, `auth`},
	} {
		testfixture.WriteFile(t, dir, "gateway.json", `{"servers": {"svc": `+tc.server+`}}`)
		_, err := gateway.LoadConfig(filepath.Join(dir, "gateway.json"))
		if pmlerr.CodeOf(err, "") != pmlerr.InvalidConfig || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want INVALID_CONFIG with %q", tc.server, err, tc.want)
		}
	}
	testfixture.WriteFile(t, dir, "gateway.json", `{"servers": {"svc": {`+url+`, "hosted": true, "auth": {"type": "client_credentials", "client_id": "a", "client_secret": "b", "issuer": "http://127.0.0.1:9"}}}}`)
	if _, err := gateway.LoadConfig(filepath.Join(dir, "gateway.json")); err != nil {
		t.Fatalf("valid auth: %v", err)
	}
}

// A ${VAR} in the auth block makes the server BYOK: the gateway holds no
// secret, a call without it is API_KEY_REQUIRED, and with the caller's
// secret the gateway gets a token for that call.
func TestHostedClientCredentialsBYOK(t *testing.T) {
	as := testfixture.StartOAuthServer(t)
	dir := t.TempDir()
	testfixture.WriteFile(t, dir, "gateway.json", fmt.Sprintf(`{"servers": {
		"svc": {"url": %q, "hosted": true, "auth": {"type": "client_credentials", "client_id": %q, "client_secret": "${SVC_SECRET}"}}
	}}`, as.URL, as.ClientID))
	cfg, err := gateway.LoadConfig(filepath.Join(dir, "gateway.json"))
	if err != nil {
		t.Fatal(err)
	}
	g := gatewaytest.Start(t, gateway.Options{Config: cfg})
	s := g.Connect(t, g.Key, true)
	call := func(env map[string]string) *mcp.CallToolResult {
		res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "call",
			Arguments: wire.CallRequest{Tool: "svc:echo", Args: json.RawMessage(`{"text": "byok"}`), Env: env}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if a := gatewaytest.DecodeAnswer(t, call(nil)); a.ErrorCode != pmlerr.APIKeyRequired || !strings.Contains(a.Error, "SVC_SECRET") {
		t.Fatalf("without the secret: %+v", a)
	}
	res := call(map[string]string{"SVC_SECRET": as.ClientSecret})
	if res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "byok") || as.Grants("client_credentials") != 1 {
		t.Fatalf("with the secret: %+v, grants %d", res, as.Grants("client_credentials"))
	}
}
