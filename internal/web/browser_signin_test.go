package web_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/httpserve"
	"github.com/pml-go/pml/internal/testfixture"
	"github.com/pml-go/pml/internal/tokenauth"
	"github.com/pml-go/pml/internal/wire"
)

// With an issuer that has a web client, the page signs a person in through
// it (authorization code with PKCE, a real OpenID provider) and lists their
// project's executions with the token; no key is typed.
func TestBrowserSignInThroughTheIssuer(t *testing.T) {
	exe := chromium(t)
	p := testfixture.StartOIDCProvider(t)
	g := gatewaytest.StartAt(t, func(base string) gateway.Options {
		p.AddWebClient("pml-web", base+"/", base+"/mcp", map[string]any{"groups": []string{"acme-web"}})
		return gateway.Options{Config: gateway.FileConfig{OAuth: &tokenauth.Config{Resource: base + "/mcp", Issuers: []tokenauth.Issuer{{
			Issuer: p.Issuer, RequiredScopes: []string{"pml"}, WebClientID: "pml-web",
			Tenants: []tokenauth.TenantRule{{Claim: "groups", Value: "acme-web", Org: "acme", Project: "web", Role: tokenauth.RoleViewer}},
		}}}}}
	}, httpserve.Limits{})
	a := gatewaytest.Execute(t, g.Connect(t, g.Key, false), wire.ExecuteRequest{Code: `return 7`})
	if a.Status != wire.StatusSuccess {
		t.Fatalf("run: %+v", a)
	}

	// The page may post to the issuer's token endpoint, and nowhere else.
	resp, err := http.Get(g.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "connect-src 'self' "+p.Issuer+";") {
		t.Errorf("CSP %q", csp)
	}

	b := startBrowser(t, exe)
	row := `#traces tbody tr[data-trace-id="` + a.TraceID + `"]`
	// A forged return (a code this page never asked for) signs nobody in.
	b.do("a forged return", chromedp.Navigate(g.URL+"/?code=forged&state=forged"), chromedp.WaitVisible(`#status.error`))
	if got := b.text(`#status`); !strings.Contains(got, "does not match") {
		t.Errorf("forged return: %q", got)
	}
	if kept, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string](`localStorage.getItem("pml.apiKey") || ""`)); kept != "" {
		t.Errorf("a forged return stored %q", kept)
	}
	b.do("open the page", chromedp.Navigate(g.URL+"/"), chromedp.WaitVisible(`#sign-in`))
	if got := b.text(`#sign-in`); !strings.Contains(got, strings.TrimPrefix(p.Issuer, "http://")) {
		t.Errorf("sign-in button: %q", got)
	}
	b.do("sign in", chromedp.Click(`#sign-in`), chromedp.WaitVisible(row))
	token, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`localStorage.getItem("pml.apiKey")`))
	if err != nil || strings.Count(token, ".") != 2 || strings.HasPrefix(token, "pml_") {
		t.Errorf("the page keeps %q, want the access token (%v)", token, err)
	}
	loc, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`location.href`))
	if err != nil || strings.Contains(loc, "code=") {
		t.Errorf("the code stays in the address bar: %q", loc)
	}
	for _, u := range b.requested() {
		if !strings.HasPrefix(u, g.URL+"/") && !strings.HasPrefix(u, p.Issuer+"/") && !strings.HasPrefix(u, "data:") {
			t.Errorf("the page requested another origin: %s", u)
		}
	}
}
