package tokenauth_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/pml-go/pml/internal/testfixture"
	"github.com/pml-go/pml/internal/tokenauth"
)

// fakeIssuer is an OpenID issuer on loopback that signs tokens with its
// own key and counts the fetches of its JWKS, as the provider did in
// issue 29's reproduction.
type fakeIssuer struct {
	URL     string
	key     *rsa.PrivateKey
	fetches atomic.Int64
}

func startFakeIssuer(t *testing.T) *fakeIssuer {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeIssuer{key: key}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]string{"issuer": f.URL, "jwks_uri": f.URL + "/jwks",
			"authorization_endpoint": f.URL + "/authorize", "token_endpoint": f.URL + "/token"})
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		f.fetches.Add(1)
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Algorithm: "RS256", Use: "sig"}}})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	f.URL = srv.URL
	return f
}

// token is a member's access token for resource, signed with kid in its
// header.
func (f *fakeIssuer) token(t *testing.T, kid string) string {
	t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: f.key},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", kid))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]any{"iss": f.URL, "aud": resource, "sub": "dev", "scope": "pml",
		"groups": []string{"acme-web"}, "iat": time.Now().Unix(), "exp": time.Now().Add(time.Hour).Unix()})
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

func issuerConf(url, webClient string) tokenauth.Issuer {
	return tokenauth.Issuer{Issuer: url, RequiredScopes: []string{"pml"}, WebClientID: webClient,
		Tenants: []tokenauth.TenantRule{{Claim: "groups", Value: "acme-web", Org: "acme", Project: "web", Role: tokenauth.RoleMember}}}
}

// Issue 29: 300 tokens with a real token's header and payload and a
// broken signature, then 300 naming made-up key ids, make the gateway
// fetch the issuer's keys once for the first use and once more for an
// unknown key id; the refusals are counted, and a good token still
// verifies.
func TestKeyRefetchIsBounded(t *testing.T) {
	f := startFakeIssuer(t)
	var refused atomic.Int64
	v, err := tokenauth.New(tokenauth.Config{Resource: resource, Issuers: []tokenauth.Issuer{issuerConf(f.URL, "")}},
		tokenauth.Options{OnRefetchRefused: func() { refused.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	good := f.token(t, "k1")
	if _, err := v.Verify(ctx, good); err != nil {
		t.Fatal(err)
	}
	other := strings.Split(f.token(t, "k1"), ".")
	p := strings.Split(good, ".")
	broken := p[0] + "." + p[1] + "." + strings.Repeat("A", len(other[2]))
	var wg sync.WaitGroup
	for range 300 {
		wg.Go(func() {
			if _, err := v.Verify(ctx, broken); !errors.Is(err, tokenauth.ErrInvalidToken) {
				t.Errorf("broken signature: %v", err)
			}
		})
	}
	wg.Wait()
	if n := f.fetches.Load(); n != 1 {
		t.Errorf("%d key fetches after 300 broken signatures, want 1", n)
	}
	for i := range 300 {
		wg.Go(func() {
			if _, err := v.Verify(ctx, f.token(t, fmt.Sprintf("made-up-%d", i))); !errors.Is(err, tokenauth.ErrInvalidToken) {
				t.Errorf("unknown key id: %v", err)
			}
		})
	}
	wg.Wait()
	if n := f.fetches.Load(); n != 2 {
		t.Errorf("%d key fetches after 300 unknown key ids, want 2", n)
	}
	if n := refused.Load(); n != 299 {
		t.Errorf("%d refetches refused, want 299", n)
	}
	if _, err := v.Verify(ctx, good); err != nil {
		t.Fatalf("a good token after: %v", err)
	}
}

// Issue 29: while one configured issuer's discovery hangs, a token of
// another issuer verifies, the page's sign-in origins are answered, and
// another token of the hanging issuer gives up with its own request; the
// hanging discovery then fails as issuer unavailable.
func TestHangingIssuerBlocksNobody(t *testing.T) {
	f := startFakeIssuer(t)
	hang, accepted, release := testfixture.HangingListener(t)
	v, err := tokenauth.New(tokenauth.Config{Resource: resource, Issuers: []tokenauth.Issuer{
		issuerConf(hang, "web"), issuerConf(f.URL, "web"),
	}}, tokenauth.Options{DiscoveryTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	hanging := withIssuer(t, f.token(t, "k1"), hang)
	first := make(chan error, 1)
	go func() {
		_, err := v.Verify(ctx, hanging)
		first <- err
	}()
	<-accepted // its discovery is under way, and hangs
	if _, err := v.Verify(ctx, f.token(t, "k1")); err != nil {
		t.Fatalf("another issuer's token: %v", err)
	}
	if origins := v.WebOrigins(); len(origins) != 2 {
		t.Fatalf("web origins %v", origins)
	}
	short, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := v.Verify(short, hanging); !errors.Is(err, tokenauth.ErrIssuerUnavailable) {
		t.Fatalf("a second token of the hanging issuer: %v", err)
	}
	release()
	if err := <-first; !errors.Is(err, tokenauth.ErrIssuerUnavailable) {
		t.Fatalf("the hanging issuer's token: %v", err)
	}
}

// A discovery that hangs ends at the discovery timeout.
func TestDiscoveryTimeout(t *testing.T) {
	f := startFakeIssuer(t)
	hang, _, _ := testfixture.HangingListener(t)
	v, err := tokenauth.New(tokenauth.Config{Resource: resource, Issuers: []tokenauth.Issuer{issuerConf(hang, "")}},
		tokenauth.Options{DiscoveryTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(context.Background(), withIssuer(t, f.token(t, "k1"), hang)); !errors.Is(err, tokenauth.ErrIssuerUnavailable) {
		t.Fatalf("hanging issuer: %v", err)
	}
}

// Issue 29: issuer A and A/ are one issuer; the config is refused instead
// of the second silently replacing the first.
func TestDuplicateIssuersRefused(t *testing.T) {
	for _, pair := range [][2]string{
		{"https://idp.invalid", "https://idp.invalid/"},
		{"https://idp.invalid/realms/x/", "https://idp.invalid/realms/x"},
		{"https://idp.invalid", "https://idp.invalid"},
	} {
		c := tokenauth.Config{Resource: resource, Issuers: []tokenauth.Issuer{issuerConf(pair[0], ""), issuerConf(pair[1], "")}}
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "same issuer") {
			t.Errorf("%q and %q: %v", pair[0], pair[1], err)
		}
	}
}
