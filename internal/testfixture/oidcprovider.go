package testfixture

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/google/uuid"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
	"golang.org/x/oauth2/clientcredentials"
)

// OIDCProvider is a real OpenID provider (zitadel's op package) on a
// loopback listener, for the gateway's token tests: it serves discovery and
// JWKS, and issues RS256-signed JWT access tokens through the client
// credentials grant to the service clients a test registers, with the
// audience, scopes, expiry and claims each is given. Its signing key can be
// rotated.
type OIDCProvider struct {
	Issuer string
	store  *oidcStore
}

// OIDCClient is a service client of the provider and what its tokens say.
type OIDCClient struct {
	ID, Secret string
	Audience   string         // the token's aud
	Claims     map[string]any // extra claims (groups, …)
	// ShortLived makes its tokens expire a second after they are issued
	// (a token endpoint cannot hand out one already expired).
	ShortLived bool
}

// StartOIDCProvider starts a provider until t ends.
func StartOIDCProvider(t testing.TB) *OIDCProvider {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	issuer := "http://" + ln.Addr().String()
	st := &oidcStore{Storage: storage.NewStorage(storage.NewUserStore(issuer)), clients: map[string]*oidcClient{}}
	st.rotateLocked()
	var key [32]byte
	_, _ = rand.Read(key[:])
	provider, err := op.NewProvider(&op.Config{CryptoKey: key, CodeMethodS256: true, AuthMethodPost: true},
		st, op.StaticIssuer(issuer), op.WithAllowInsecure())
	if err != nil {
		t.Fatal(err)
	}
	// A login page that signs the example user in at once, as a person
	// typing their password would, for the authorization code flow.
	mux := http.NewServeMux()
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
		id := r.URL.Query().Get("authRequestID")
		if err := st.CheckUsernamePassword(OIDCUser(issuer), "verysecure", id); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		http.Redirect(w, r, op.AuthCallbackURL(provider)(op.ContextWithIssuer(r.Context(), issuer), id), http.StatusFound)
	})
	mux.Handle("/", provider)
	srv := httptest.NewUnstartedServer(mux)
	_ = srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return &OIDCProvider{Issuer: issuer, store: st}
}

// OIDCUser is the provider's user that its login page signs in: the one
// zitadel's example user store holds.
func OIDCUser(issuer string) string {
	u, _ := url.Parse(issuer)
	return "test-user@" + u.Hostname()
}

// AddWebClient registers a public browser client (authorization code with
// PKCE) redirecting to redirectURI, whose access tokens carry audience and,
// for the signed-in user, claims.
func (p *OIDCProvider) AddWebClient(id, redirectURI, audience string, claims map[string]any) {
	p.store.mu.Lock()
	defer p.store.mu.Unlock()
	p.store.clients[id] = &oidcClient{conf: OIDCClient{ID: id, Audience: audience, Claims: claims}, web: true, redirect: redirectURI}
}

// AddClient registers a service client.
func (p *OIDCProvider) AddClient(c OIDCClient) {
	p.store.mu.Lock()
	defer p.store.mu.Unlock()
	p.store.clients[c.ID] = &oidcClient{conf: c}
}

// Token gets an access token for client id with the scopes through the
// provider's token endpoint.
func (p *OIDCProvider) Token(t testing.TB, id string, scopes ...string) string {
	t.Helper()
	p.store.mu.Lock()
	c, ok := p.store.clients[id]
	p.store.mu.Unlock()
	if !ok {
		t.Fatalf("no client %q", id)
	}
	cfg := clientcredentials.Config{ClientID: id, ClientSecret: c.conf.Secret, TokenURL: p.Issuer + "/oauth/token", Scopes: scopes}
	tok, err := cfg.Token(context.Background())
	if err != nil {
		t.Fatalf("token for %s: %v", id, err)
	}
	return tok.AccessToken
}

// RotateKey replaces the signing key; the JWKS then holds only the new one.
func (p *OIDCProvider) RotateKey() {
	p.store.mu.Lock()
	defer p.store.mu.Unlock()
	p.store.rotateLocked()
}

// PublicKey is the current signing key's public half (for forging tests).
func (p *OIDCProvider) PublicKey() *rsa.PublicKey {
	p.store.mu.Lock()
	defer p.store.mu.Unlock()
	return &p.store.key.PublicKey
}

// KeyID is the current signing key's id.
func (p *OIDCProvider) KeyID() string {
	p.store.mu.Lock()
	defer p.store.mu.Unlock()
	return p.store.keyID
}

// oidcStore is zitadel's example storage with service clients of our own,
// JWT access tokens, and a rotatable key.
type oidcStore struct {
	*storage.Storage
	mu      sync.Mutex
	clients map[string]*oidcClient
	key     *rsa.PrivateKey
	keyID   string
}

func (s *oidcStore) rotateLocked() {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err) // the system's randomness failed
	}
	s.key, s.keyID = key, uuid.NewString()
}

func (s *oidcStore) client(id string) (*oidcClient, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.clients[id]
	return c, ok
}

func (s *oidcStore) GetClientByClientID(ctx context.Context, id string) (op.Client, error) {
	if c, ok := s.client(id); ok {
		return c, nil
	}
	return s.Storage.GetClientByClientID(ctx, id)
}

func (s *oidcStore) AuthorizeClientIDSecret(ctx context.Context, id, secret string) error {
	if c, ok := s.client(id); ok {
		if c.conf.Secret != secret {
			return errors.New("wrong client secret")
		}
		return nil
	}
	return s.Storage.AuthorizeClientIDSecret(ctx, id, secret)
}

func (s *oidcStore) ClientCredentials(_ context.Context, id, secret string) (op.Client, error) {
	c, ok := s.client(id)
	if !ok || c.conf.Secret != secret {
		return nil, errors.New("wrong client or secret")
	}
	return c, nil
}

func (s *oidcStore) ClientCredentialsTokenRequest(_ context.Context, id string, scopes []string) (op.TokenRequest, error) {
	c, ok := s.client(id)
	if !ok {
		return nil, errors.New("unknown client")
	}
	return &oidc.JWTTokenRequest{Subject: id, Audience: []string{c.conf.Audience}, Scopes: scopes}, nil
}

// AuthRequestByCode gives the code's request the web client's audience
// (zitadel's example storage uses the client id).
func (s *oidcStore) AuthRequestByCode(ctx context.Context, code string) (op.AuthRequest, error) {
	ar, err := s.Storage.AuthRequestByCode(ctx, code)
	if err != nil {
		return nil, err
	}
	if c, ok := s.client(ar.GetClientID()); ok {
		return audienced{AuthRequest: ar, audience: c.conf.Audience}, nil
	}
	return ar, nil
}

type audienced struct {
	op.AuthRequest
	audience string
}

func (a audienced) GetAudience() []string { return []string{a.audience} }

func (s *oidcStore) CreateAccessToken(_ context.Context, req op.TokenRequest) (string, time.Time, error) {
	exp := time.Now().Add(5 * time.Minute)
	if c, ok := s.client(req.GetSubject()); ok && c.conf.ShortLived {
		exp = time.Now().Add(time.Second)
	}
	return uuid.NewString(), exp, nil
}

// GetPrivateClaimsFromRequest puts the granted scopes and the client's
// claims into its JWT access tokens.
func (s *oidcStore) GetPrivateClaimsFromRequest(_ context.Context, req op.TokenRequest, scopes []string) (map[string]any, error) {
	claims := map[string]any{}
	if len(scopes) > 0 {
		claims["scope"] = strings.Join(scopes, " ")
	}
	id := req.GetSubject()
	if ar, ok := req.(op.AuthRequest); ok {
		id = ar.GetClientID() // a signed-in user: the web client's claims
	}
	if c, ok := s.client(id); ok {
		for k, v := range c.conf.Claims {
			claims[k] = v
		}
	}
	return claims, nil
}

type oidcSigningKey struct {
	id  string
	key *rsa.PrivateKey
}

func (k oidcSigningKey) SignatureAlgorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k oidcSigningKey) Key() any                                    { return k.key }
func (k oidcSigningKey) ID() string                                  { return k.id }

type oidcPublicKey struct {
	id  string
	key *rsa.PublicKey
}

func (k oidcPublicKey) ID() string                         { return k.id }
func (k oidcPublicKey) Algorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k oidcPublicKey) Use() string                        { return "sig" }
func (k oidcPublicKey) Key() any                           { return k.key }
func (s *oidcStore) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	return []jose.SignatureAlgorithm{jose.RS256}, nil
}

func (s *oidcStore) SigningKey(context.Context) (op.SigningKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return oidcSigningKey{id: s.keyID, key: s.key}, nil
}

func (s *oidcStore) KeySet(context.Context) ([]op.Key, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return []op.Key{oidcPublicKey{id: s.keyID, key: &s.key.PublicKey}}, nil
}

// oidcClient is a confidential service client using the client
// credentials grant, or a public browser client (web) using the
// authorization code with PKCE; either gets JWT access tokens.
type oidcClient struct {
	conf     OIDCClient
	web      bool
	redirect string
}

func (c *oidcClient) GetID() string                    { return c.conf.ID }
func (c *oidcClient) PostLogoutRedirectURIs() []string { return nil }
func (c *oidcClient) RedirectURIs() []string {
	if c.web {
		return []string{c.redirect}
	}
	return nil
}
func (c *oidcClient) ApplicationType() op.ApplicationType {
	if c.web {
		return op.ApplicationTypeUserAgent
	}
	return op.ApplicationTypeWeb
}
func (c *oidcClient) AuthMethod() oidc.AuthMethod {
	if c.web {
		return oidc.AuthMethodNone
	}
	return oidc.AuthMethodBasic
}
func (c *oidcClient) ResponseTypes() []oidc.ResponseType {
	if c.web {
		return []oidc.ResponseType{oidc.ResponseTypeCode}
	}
	return nil
}
func (c *oidcClient) GrantTypes() []oidc.GrantType {
	if c.web {
		return []oidc.GrantType{oidc.GrantTypeCode}
	}
	return []oidc.GrantType{oidc.GrantTypeClientCredentials}
}
func (c *oidcClient) LoginURL(id string) string            { return "/login?authRequestID=" + url.QueryEscape(id) }
func (c *oidcClient) AccessTokenType() op.AccessTokenType  { return op.AccessTokenTypeJWT }
func (c *oidcClient) IDTokenLifetime() time.Duration       { return time.Hour }
func (c *oidcClient) DevMode() bool                        { return true }
func (c *oidcClient) IDTokenUserinfoClaimsAssertion() bool { return false }
func (c *oidcClient) ClockSkew() time.Duration             { return 0 }
func (c *oidcClient) IsScopeAllowed(string) bool           { return true }
func (c *oidcClient) RestrictAdditionalIdTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
func (c *oidcClient) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}

// issuerHost is the provider's host, as callers are named (oidc:HOST:SUB).
func (p *OIDCProvider) issuerHost() string {
	u, _ := url.Parse(p.Issuer)
	return u.Host
}

// Caller is how the gateway names client id in traces.
func (p *OIDCProvider) Caller(id string) string { return "oidc:" + p.issuerHost() + ":" + id }

var _ http.Handler = (*op.Provider)(nil)
