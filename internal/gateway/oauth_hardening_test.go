package gateway_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/httpserve"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/testfixture"
	"github.com/pml-go/pml/internal/tokenauth"
)

// Issue 29: issuer A and A/ in the config are one issuer; the gateway
// refuses to start with INVALID_CONFIG instead of the second replacing the
// first.
func TestOAuthDuplicateIssuersRefused(t *testing.T) {
	rule := []tokenauth.TenantRule{{Claim: "g", Value: "v", Org: "o", Project: "p", Role: tokenauth.RoleMember}}
	_, _, err := gateway.Open(context.Background(), gateway.Options{DB: filepath.Join(t.TempDir(), "g.db"),
		Config: gateway.FileConfig{OAuth: &tokenauth.Config{Resource: "http://127.0.0.1:1/mcp", Issuers: []tokenauth.Issuer{
			{Issuer: "https://idp.invalid", Tenants: rule}, {Issuer: "https://idp.invalid/", Tenants: rule},
		}}}})
	if pmlerr.CodeOf(err, "") != pmlerr.InvalidConfig || !strings.Contains(err.Error(), "same issuer") {
		t.Fatalf("err = %v", err)
	}
}

// retoken rewrites a token's issuer or key id, keeping its signature.
func retoken(t *testing.T, tok, iss, kid string) string {
	t.Helper()
	p := strings.Split(tok, ".")
	edit := func(i int, key, value string) {
		if value == "" {
			return
		}
		b, err := base64.RawURLEncoding.DecodeString(p[i])
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		m[key] = value
		b, _ = json.Marshal(m)
		p[i] = base64.RawURLEncoding.EncodeToString(b)
	}
	edit(0, "kid", kid)
	edit(1, "iss", iss)
	return strings.Join(p, ".")
}

// Issue 29: while a configured issuer's discovery hangs, the page and its
// script (their CSP names the issuers' origins) and a token of another
// issuer are served; tokens naming unknown key ids make the gateway fetch
// the other issuer's keys once, the rest are refused and counted; the
// hanging issuer's token is 503 once its discovery fails.
func TestOAuthHangingIssuerBlocksNobody(t *testing.T) {
	p := testfixture.StartOIDCProvider(t)
	hang, accepted, release := testfixture.HangingListener(t)
	g := gatewaytest.StartAt(t, func(base string) gateway.Options {
		resource := base + "/mcp"
		p.AddClient(testfixture.OIDCClient{ID: "dev", Secret: "s1", Audience: resource, Claims: map[string]any{"groups": []string{"acme-web"}}})
		rules := []tokenauth.TenantRule{{Claim: "groups", Value: "acme-web", Org: "acme", Project: "web", Role: tokenauth.RoleMember}}
		return gateway.Options{Config: gateway.FileConfig{OAuth: &tokenauth.Config{Resource: resource, Issuers: []tokenauth.Issuer{
			{Issuer: hang, RequiredScopes: []string{"pml"}, Tenants: rules, WebClientID: "web"},
			{Issuer: p.Issuer, RequiredScopes: []string{"pml"}, Tenants: rules, WebClientID: "web"},
		}}}}
	}, httpserve.Limits{})
	good := p.Token(t, "dev", "pml")
	first := make(chan int, 1)
	go func() {
		resp, _ := gatewaytest.Do(t, http.MethodGet, g.URL+"/api/traces", retoken(t, good, hang, ""), nil, nil)
		first <- resp.StatusCode
	}()
	<-accepted // the hanging issuer's discovery is under way
	for _, path := range []string{"/", "/ui/app.js"} {
		resp, _ := gatewaytest.Do(t, http.MethodGet, g.URL+path, "", nil, nil)
		if resp.StatusCode != http.StatusOK || !strings.Contains(resp.Header.Get("Content-Security-Policy"), hang) {
			t.Fatalf("GET %s: %d, CSP %q", path, resp.StatusCode, resp.Header.Get("Content-Security-Policy"))
		}
	}
	if resp, body := gatewaytest.Do(t, http.MethodGet, g.URL+"/api/traces", good, nil, nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("another issuer's token: %d %s", resp.StatusCode, body)
	}
	for i := range 20 {
		if resp, _ := gatewaytest.Do(t, http.MethodGet, g.URL+"/api/traces", retoken(t, good, "", fmt.Sprintf("made-up-%d", i)), nil, nil); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("a made-up key id: %d", resp.StatusCode)
		}
	}
	wantMetric(t, metricsText(t, g), "pml_oauth_key_refetch_refused_total 19")
	if resp, _ := gatewaytest.Do(t, http.MethodGet, g.URL+"/api/traces", good, nil, nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("the good token after: %d", resp.StatusCode)
	}
	release()
	if st := <-first; st != http.StatusServiceUnavailable {
		t.Fatalf("the hanging issuer's token: %d", st)
	}
}
