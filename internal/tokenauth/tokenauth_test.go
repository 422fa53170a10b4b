package tokenauth_test

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/testfixture"
	"github.com/pml-go/pml/internal/tokenauth"
)

const resource = "http://127.0.0.1:1/mcp"

// setup starts a real OpenID provider with clients for each case and a
// verifier trusting it.
func setup(t *testing.T) (*testfixture.OIDCProvider, *tokenauth.Verifier) {
	t.Helper()
	p := testfixture.StartOIDCProvider(t)
	for _, c := range []testfixture.OIDCClient{
		{ID: "dev", Secret: "s1", Audience: resource, Claims: map[string]any{"groups": []string{"acme-web"}}},
		{ID: "reader", Secret: "s2", Audience: resource, Claims: map[string]any{"groups": []string{"acme-web-read"}}},
		{ID: "other", Secret: "s3", Audience: "https://other.invalid/mcp", Claims: map[string]any{"groups": []string{"acme-web"}}},
		{ID: "late", Secret: "s4", Audience: resource, Claims: map[string]any{"groups": []string{"acme-web"}}, ShortLived: true},
		{ID: "stranger", Secret: "s5", Audience: resource, Claims: map[string]any{"groups": []string{"nobody"}}},
	} {
		p.AddClient(c)
	}
	v, err := tokenauth.New(tokenauth.Config{Resource: resource, Issuers: []tokenauth.Issuer{{
		Issuer: p.Issuer, RequiredScopes: []string{"pml"},
		Tenants: []tokenauth.TenantRule{
			{Claim: "groups", Value: "acme-web", Org: "acme", Project: "web", Role: tokenauth.RoleMember},
			{Claim: "groups", Value: "acme-web-read", Org: "acme", Project: "web", Role: tokenauth.RoleViewer},
		},
	}}}, tokenauth.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return p, v
}

func TestVerifyGoodToken(t *testing.T) {
	p, v := setup(t)
	id, err := v.Verify(context.Background(), p.Token(t, "dev", "pml"))
	if err != nil {
		t.Fatal(err)
	}
	if id.Scope != (store.Scope{Org: "acme", Project: "web"}) || id.Role != tokenauth.RoleMember || id.Subject != "dev" || id.Caller() != p.Caller("dev") {
		t.Fatalf("identity %+v", id)
	}
	if id, err := v.Verify(context.Background(), p.Token(t, "reader", "pml")); err != nil || id.Role != tokenauth.RoleViewer {
		t.Fatalf("viewer: %+v %v", id, err)
	}
}

// Every token an attacker or a misconfiguration can bring is refused with
// the error that says why, and a good token is accepted right after each.
func TestVerifyRefusals(t *testing.T) {
	p, v := setup(t)
	ctx := context.Background()
	second := testfixture.StartOIDCProvider(t) // an issuer the gateway does not trust
	second.AddClient(testfixture.OIDCClient{ID: "dev", Secret: "x", Audience: resource, Claims: map[string]any{"groups": []string{"acme-web"}}})
	good := p.Token(t, "dev", "pml")

	cases := []struct {
		name  string
		token func() string
		want  error
	}{
		{"wrong audience", func() string { return p.Token(t, "other", "pml") }, tokenauth.ErrInvalidToken},
		{"wrong issuer", func() string { return second.Token(t, "dev", "pml") }, tokenauth.ErrInvalidToken},
		{"expired", func() string {
			tok := p.Token(t, "late", "pml")
			time.Sleep(2 * time.Second)
			return tok
		}, tokenauth.ErrInvalidToken},
		{"missing scope", func() string { return p.Token(t, "dev") }, tokenauth.ErrInsufficientScope},
		{"another claim", func() string { return p.Token(t, "stranger", "pml") }, tokenauth.ErrNoTenant},
		{"alg none", func() string { return forgeNone(t, good) }, tokenauth.ErrInvalidToken},
		{"HS256 with the public key", func() string { return forgeHMAC(t, good, p) }, tokenauth.ErrInvalidToken},
		{"payload edited", func() string { return editPayload(t, good) }, tokenauth.ErrInvalidToken},
		{"not a JWT", func() string { return "pml_notajwt" }, tokenauth.ErrInvalidToken},
	}
	for _, c := range cases {
		_, err := v.Verify(ctx, c.token())
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
		if _, err := v.Verify(ctx, good); err != nil {
			t.Fatalf("after %s, a good token: %v", c.name, err)
		}
	}
}

// A key rotated in the JWKS: new tokens verify (the key set is fetched
// again for the unknown key id), tokens of the retired key do not.
func TestVerifyKeyRotation(t *testing.T) {
	p, v := setup(t)
	ctx := context.Background()
	old := p.Token(t, "dev", "pml")
	if _, err := v.Verify(ctx, old); err != nil {
		t.Fatal(err)
	}
	p.RotateKey()
	if _, err := v.Verify(ctx, p.Token(t, "dev", "pml")); err != nil {
		t.Fatalf("a token of the new key: %v", err)
	}
	if _, err := v.Verify(ctx, old); !errors.Is(err, tokenauth.ErrInvalidToken) {
		t.Fatalf("a token of the retired key: %v", err)
	}
}

// An issuer that is down: 503-class error, and it is found once it is up
// (here: a configured issuer nobody serves).
func TestVerifyIssuerDown(t *testing.T) {
	p, _ := setup(t)
	v, err := tokenauth.New(tokenauth.Config{Resource: resource, Issuers: []tokenauth.Issuer{{
		Issuer: p.Issuer, Tenants: []tokenauth.TenantRule{{Claim: "groups", Value: "acme-web", Org: "a", Project: "b", Role: tokenauth.RoleMember}},
	}}}, tokenauth.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tok := p.Token(t, "dev", "pml")
	// Point the token at an issuer that is configured but unreachable.
	down, err := tokenauth.New(tokenauth.Config{Resource: resource, Issuers: []tokenauth.Issuer{{
		Issuer: "http://127.0.0.1:1", Tenants: []tokenauth.TenantRule{{Claim: "groups", Value: "x", Org: "a", Project: "b", Role: tokenauth.RoleMember}},
	}}}, tokenauth.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := down.Verify(context.Background(), withIssuer(t, tok, "http://127.0.0.1:1")); !errors.Is(err, tokenauth.ErrIssuerUnavailable) {
		t.Fatalf("issuer down: %v", err)
	}
	if _, err := v.Verify(context.Background(), tok); err != nil {
		t.Fatalf("the issuer up: %v", err)
	}
}

func TestConfigValidate(t *testing.T) {
	rule := []tokenauth.TenantRule{{Claim: "g", Value: "v", Org: "o", Project: "p", Role: tokenauth.RoleViewer}}
	for name, c := range map[string]tokenauth.Config{
		"no resource":        {Issuers: []tokenauth.Issuer{{Issuer: "https://idp.invalid", Tenants: rule}}},
		"no issuer":          {Resource: resource},
		"bad issuer":         {Resource: resource, Issuers: []tokenauth.Issuer{{Issuer: "idp", Tenants: rule}}},
		"no rule":            {Resource: resource, Issuers: []tokenauth.Issuer{{Issuer: "https://idp.invalid"}}},
		"unknown role":       {Resource: resource, Issuers: []tokenauth.Issuer{{Issuer: "https://idp.invalid", Tenants: []tokenauth.TenantRule{{Claim: "g", Value: "v", Org: "o", Project: "p", Role: "owner"}}}}},
		"fragment URI":       {Resource: resource + "#x", Issuers: []tokenauth.Issuer{{Issuer: "https://idp.invalid", Tenants: rule}}},
		"operator as member": {Resource: resource, Issuers: []tokenauth.Issuer{{Issuer: "https://idp.invalid", Tenants: []tokenauth.TenantRule{{Claim: "g", Value: "v", Org: "*", Project: "*", Role: tokenauth.RoleMember}}}}},
		"half a wildcard":    {Resource: resource, Issuers: []tokenauth.Issuer{{Issuer: "https://idp.invalid", Tenants: []tokenauth.TenantRule{{Claim: "g", Value: "v", Org: "acme", Project: "*", Role: tokenauth.RoleAdmin}}}}},
		"empty project":      {Resource: resource, Issuers: []tokenauth.Issuer{{Issuer: "https://idp.invalid", Tenants: []tokenauth.TenantRule{{Claim: "g", Value: "v", Org: "o", Role: tokenauth.RoleAdmin}}}}},
	} {
		if err := c.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func parts(t *testing.T, tok string) (header, payload map[string]any) {
	t.Helper()
	p := strings.Split(tok, ".")
	for i, dst := range []*map[string]any{&header, &payload} {
		b, err := base64.RawURLEncoding.DecodeString(p[i])
		if err != nil || json.Unmarshal(b, dst) != nil {
			t.Fatalf("token part %d: %v", i, err)
		}
	}
	return header, payload
}

func enc(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// forgeNone is good's claims, unsigned, with alg none and a fresh expiry.
func forgeNone(t *testing.T, good string) string {
	_, payload := parts(t, good)
	payload["exp"] = time.Now().Add(time.Hour).Unix()
	return enc(t, map[string]any{"alg": "none", "typ": "JWT"}) + "." + enc(t, payload) + "."
}

// forgeHMAC signs good's claims with HS256, the issuer's public key as the
// secret: the classic key-confusion attack.
func forgeHMAC(t *testing.T, good string, p *testfixture.OIDCProvider) string {
	_, payload := parts(t, good)
	der, err := x509.MarshalPKIXPublicKey(p.PublicKey())
	if err != nil {
		t.Fatal(err)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: der},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", p.KeyID()))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(payload)
	sig, err := signer.Sign(body)
	if err != nil {
		t.Fatal(err)
	}
	out, err := sig.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// editPayload changes good's subject, keeping its signature.
func editPayload(t *testing.T, good string) string {
	p := strings.Split(good, ".")
	_, payload := parts(t, good)
	payload["sub"] = "admin"
	return p[0] + "." + enc(t, payload) + "." + p[2]
}

func withIssuer(t *testing.T, tok, iss string) string {
	p := strings.Split(tok, ".")
	_, payload := parts(t, tok)
	payload["iss"] = iss
	return p[0] + "." + enc(t, payload) + "." + p[2]
}
