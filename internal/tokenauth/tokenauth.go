// Package tokenauth makes the gateway an OAuth 2.1 protected resource
// (docs/auth.md): it verifies the JWT access tokens of configured OpenID
// issuers against their JWKS (signature, issuer, audience = the gateway's
// resource URI, expiry, the required scopes) and maps their claims to a
// tenant and a role. Discovery, JWKS caching, key rotation and signature
// checks are go-oidc's; this package adds the scope check and the mapping.
package tokenauth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/pml-go/pml/internal/store"
)

// Role is what a caller may do in its tenant.
type Role string

const (
	// RoleViewer reads traces, the dashboard and the catalog.
	RoleViewer Role = "viewer"
	// RoleMember also executes, discovers, calls and manages the tenant's
	// own capabilities: what an API key may do.
	RoleMember Role = "member"
	// RoleAdmin also administers the tenant (keys, visibility, retention).
	RoleAdmin Role = "admin"
)

// Allows reports whether r includes what need requires.
func (r Role) Allows(need Role) bool { return rank(r) >= rank(need) }

func rank(r Role) int {
	switch r {
	case RoleAdmin:
		return 3
	case RoleMember:
		return 2
	case RoleViewer:
		return 1
	}
	return 0
}

// Config is the gateway config's "oauth" block.
type Config struct {
	// Resource is the gateway's resource URI (its MCP endpoint's URL, as
	// clients name it): the audience every token must carry.
	Resource string   `json:"resource"`
	Issuers  []Issuer `json:"issuers"`
}

// Issuer is one trusted OpenID provider.
type Issuer struct {
	Issuer string `json:"issuer"`
	// RequiredScopes must all be granted to the token ("scope" or "scp").
	RequiredScopes []string `json:"required_scopes,omitempty"`
	// Tenants map a token to a tenant and role: the first rule whose claim
	// holds the value (a string equal to it, or a list containing it) wins.
	Tenants []TenantRule `json:"tenants"`
	// WebClientID is the public client registered at the issuer for the
	// gateway's web page (authorization code with PKCE, redirect URI: the
	// gateway's origin and "/"). Empty: the page asks for an API key.
	WebClientID string `json:"web_client_id,omitempty"`
}

// TenantRule is one claim-to-tenant mapping. Org and project "*" with the
// admin role make an operator: the dashboard of every tenant, and nothing
// else (docs/auth.md).
type TenantRule struct {
	Claim   string `json:"claim"`
	Value   string `json:"value"`
	Org     string `json:"org"`
	Project string `json:"project"`
	Role    Role   `json:"role"`
}

// Validate refuses a config that could not work or would be unsafe.
func (c Config) Validate() error {
	u, err := url.Parse(c.Resource)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.Fragment != "" {
		return fmt.Errorf("oauth.resource %q: an absolute http(s) URL without a fragment is required", c.Resource)
	}
	if len(c.Issuers) == 0 {
		return errors.New("oauth.issuers: at least one issuer is required")
	}
	seen := map[string]int{}
	for i, is := range c.Issuers {
		if u, err := url.Parse(is.Issuer); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return fmt.Errorf("oauth.issuers[%d].issuer %q: an absolute http(s) URL is required", i, is.Issuer)
		}
		// Tokens name an issuer with or without its trailing slash: two
		// entries that differ only there are one issuer, and the second
		// would silently replace the first (docs/auth.md).
		if j, dup := seen[issuerKey(is.Issuer)]; dup {
			return fmt.Errorf("oauth.issuers[%d].issuer %q: the same issuer as oauth.issuers[%d] (%q); list each issuer once", i, is.Issuer, j, c.Issuers[j].Issuer)
		}
		seen[issuerKey(is.Issuer)] = i
		if len(is.Tenants) == 0 {
			return fmt.Errorf("oauth.issuers[%d].tenants: at least one rule is required", i)
		}
		for j, r := range is.Tenants {
			if r.Claim == "" || r.Value == "" || r.Org == "" || r.Project == "" || rank(r.Role) == 0 {
				return fmt.Errorf("oauth.issuers[%d].tenants[%d]: claim, value, org, project and a role (admin, member or viewer) are required", i, j)
			}
			if (r.Org == "*" || r.Project == "*") && (r.Org != r.Project || r.Role != RoleAdmin) {
				return fmt.Errorf(`oauth.issuers[%d].tenants[%d]: "*" stands for every tenant: org and project both "*", role admin (an operator)`, i, j)
			}
		}
	}
	return nil
}

// Identity is a verified token's caller.
type Identity struct {
	Issuer  string
	Subject string
	Scope   store.Scope
	Role    Role
}

// Caller names the identity in traces: the issuer's host and the subject.
func (id Identity) Caller() string {
	host := id.Issuer
	if u, err := url.Parse(id.Issuer); err == nil && u.Host != "" {
		host = u.Host
	}
	return "oidc:" + host + ":" + id.Subject
}

// Errors of Verify, each with the answer it calls for (docs/auth.md).
var (
	// ErrInvalidToken: 401 invalid_token (bad signature, issuer, audience,
	// expiry, algorithm, or not a JWT at all).
	ErrInvalidToken = errors.New("invalid token")
	// ErrInsufficientScope: 403 insufficient_scope.
	ErrInsufficientScope = errors.New("insufficient scope")
	// ErrNoTenant: 403, the token is valid but maps to no tenant.
	ErrNoTenant = errors.New("no tenant")
	// ErrIssuerUnavailable: 503, the issuer's discovery or keys cannot be
	// fetched; the token may well be valid.
	ErrIssuerUnavailable = errors.New("issuer unavailable")
)

// signingAlgs are the asymmetric algorithms tokens may be signed with; "none"
// and HMAC (a token "signed" with the issuer's public key) never verify.
var signingAlgs = []string{oidc.RS256, oidc.RS384, oidc.RS512, oidc.ES256, oidc.ES384, oidc.ES512, oidc.PS256, oidc.PS384, oidc.PS512, oidc.EdDSA}

// Verifier checks tokens of the configured issuers. Safe for concurrent use.
// Its issuers are fixed at New; each has its own state, so a slow or
// hanging issuer never holds up another's tokens or WebOrigins.
type Verifier struct {
	cfg    Config
	opts   Options
	issuer map[string]*issuerState // read-only after New
}

// issuerState is one issuer's discovery and keys.
type issuerState struct {
	conf Issuer
	// discovering admits one discovery at a time (a buffered channel, so
	// a waiter gives up with its request); mu guards the fields below and
	// is never held across network I/O.
	discovering chan struct{}
	mu          sync.Mutex
	provider    *oidc.Provider
	verifier    *oidc.IDTokenVerifier
	keys        *keySet
	failedAt    time.Time // last failed discovery: retried after discoveryRetry
}

// discoveryRetry spaces the discovery attempts of an unreachable issuer.
const discoveryRetry = 10 * time.Second

// Defaults of Options.
const (
	// DefaultDiscoveryTimeout bounds one discovery or key fetch: a token
	// of a hanging issuer is refused (ErrIssuerUnavailable) after it.
	DefaultDiscoveryTimeout = 3 * time.Second
	// DefaultKeyRefetchInterval spaces the refetches of an issuer's keys
	// for a key id it does not list (docs/auth.md).
	DefaultKeyRefetchInterval = time.Minute
)

// Options tune a Verifier; zero fields take the defaults.
type Options struct {
	// Client fetches discovery documents and keys (nil:
	// http.DefaultClient).
	Client *http.Client
	// DiscoveryTimeout bounds one discovery or key fetch.
	DiscoveryTimeout time.Duration
	// KeyRefetchInterval: an issuer's keys are fetched again for an
	// unknown key id at most once per interval (the first fetch excepted).
	KeyRefetchInterval time.Duration
	// OnRefetchRefused is called for each token whose unknown key id was
	// not fetched because the interval had not passed (a metric).
	OnRefetchRefused func()
}

// New returns a Verifier; issuers are discovered on first use (an issuer
// that is down when the gateway starts does not stop it).
func New(cfg Config, opts Options) (*Verifier, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if opts.Client == nil {
		opts.Client = http.DefaultClient
	}
	if opts.DiscoveryTimeout <= 0 {
		opts.DiscoveryTimeout = DefaultDiscoveryTimeout
	}
	if opts.KeyRefetchInterval <= 0 {
		opts.KeyRefetchInterval = DefaultKeyRefetchInterval
	}
	if opts.OnRefetchRefused == nil {
		opts.OnRefetchRefused = func() {}
	}
	v := &Verifier{cfg: cfg, opts: opts, issuer: map[string]*issuerState{}}
	for _, is := range cfg.Issuers {
		v.issuer[issuerKey(is.Issuer)] = &issuerState{conf: is, discovering: make(chan struct{}, 1)}
	}
	return v, nil
}

// issuerKey is an issuer URL without its trailing slash.
func issuerKey(iss string) string { return strings.TrimSuffix(iss, "/") }

// Resource is the gateway's resource URI.
func (v *Verifier) Resource() string { return v.cfg.Resource }

// Issuers lists the trusted issuers, for the protected resource metadata.
func (v *Verifier) Issuers() []string {
	var out []string
	for _, is := range v.cfg.Issuers {
		out = append(out, is.Issuer)
	}
	return out
}

// Scopes lists every required scope, for the metadata and challenges.
func (v *Verifier) Scopes() []string {
	var out []string
	for _, is := range v.cfg.Issuers {
		for _, s := range is.RequiredScopes {
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

// LooksLikeJWT tells a token from an API key or garbage without verifying.
func LooksLikeJWT(raw string) bool { return strings.Count(raw, ".") == 2 }

// Verify checks raw and maps it to its caller.
func (v *Verifier) Verify(ctx context.Context, raw string) (Identity, error) {
	iss, err := unverifiedIssuer(raw)
	if err != nil {
		return Identity{}, fmt.Errorf("%w: %w", ErrInvalidToken, err)
	}
	st, err := v.state(ctx, iss)
	if err != nil {
		return Identity{}, err
	}
	// The keys are fetched here, if at all, so that their errors keep
	// their kind; the verifier then checks against the keys held.
	if err := st.keys.ensure(ctx, raw); err != nil {
		return Identity{}, err
	}
	tok, err := st.verifier.Verify(ctx, raw)
	if err != nil {
		var netErr interface{ Timeout() bool }
		if errors.As(err, &netErr) {
			return Identity{}, fmt.Errorf("%w: %w", ErrIssuerUnavailable, err)
		}
		return Identity{}, fmt.Errorf("%w: %w", ErrInvalidToken, err)
	}
	var claims map[string]any
	if err := tok.Claims(&claims); err != nil {
		return Identity{}, fmt.Errorf("%w: claims: %w", ErrInvalidToken, err)
	}
	granted := grantedScopes(claims)
	for _, need := range st.conf.RequiredScopes {
		if !slices.Contains(granted, need) {
			return Identity{}, fmt.Errorf("%w: the token lacks scope %q", ErrInsufficientScope, need)
		}
	}
	for _, r := range st.conf.Tenants {
		if claimHolds(claims[r.Claim], r.Value) {
			return Identity{Issuer: tok.Issuer, Subject: tok.Subject, Scope: store.Scope{Org: r.Org, Project: r.Project}, Role: r.Role}, nil
		}
	}
	return Identity{}, fmt.Errorf("%w: no tenant rule of issuer %s matches the token of %q", ErrNoTenant, tok.Issuer, tok.Subject)
}

// state returns iss's verifier, discovering the issuer on first use. Only
// iss's own discovery is waited for, and at most until ctx ends; one
// discovery runs at a time per issuer, bounded by DiscoveryTimeout.
func (v *Verifier) state(ctx context.Context, iss string) (*issuerState, error) {
	st, ok := v.issuer[issuerKey(iss)]
	if !ok {
		return nil, fmt.Errorf("%w: issuer %q is not trusted by this gateway", ErrInvalidToken, iss)
	}
	if ready, err := st.ready(); ready || err != nil {
		return st, err
	}
	select {
	case st.discovering <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: %s: waiting for its discovery: %w", ErrIssuerUnavailable, st.conf.Issuer, ctx.Err())
	}
	defer func() { <-st.discovering }()
	if ready, err := st.ready(); ready || err != nil {
		return st, err // discovered, or failed, while this request waited
	}
	// The discovery does not end with the request that started it: others
	// wait for it.
	dctx, cancel := context.WithTimeout(oidc.ClientContext(context.WithoutCancel(ctx), v.opts.Client), v.opts.DiscoveryTimeout)
	defer cancel()
	p, err := oidc.NewProvider(dctx, st.conf.Issuer)
	st.mu.Lock()
	defer st.mu.Unlock()
	if err != nil {
		st.failedAt = time.Now()
		return nil, fmt.Errorf("%w: discovering %s: %w", ErrIssuerUnavailable, st.conf.Issuer, err)
	}
	keys := &keySet{url: jwksURL(p), opts: v.opts, fetching: make(chan struct{}, 1)}
	st.provider, st.keys = p, keys
	st.verifier = oidc.NewVerifier(st.conf.Issuer, keys, &oidc.Config{ClientID: v.cfg.Resource, SupportedSigningAlgs: signingAlgs})
	return st, nil
}

// ready reports whether st is discovered, or the error of a discovery that
// failed within discoveryRetry.
func (st *issuerState) ready() (bool, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.verifier != nil {
		return true, nil
	}
	if !st.failedAt.IsZero() && time.Since(st.failedAt) < discoveryRetry {
		return false, fmt.Errorf("%w: %s (discovery failed recently)", ErrIssuerUnavailable, st.conf.Issuer)
	}
	return false, nil
}

// endpoint is st's provider once discovered.
func (st *issuerState) endpoint() (oauth2.Endpoint, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.provider == nil {
		return oauth2.Endpoint{}, false
	}
	return st.provider.Endpoint(), true
}

// WebSignIn is what the web page needs to sign a person in.
type WebSignIn struct {
	Issuer                string `json:"issuer"`
	AuthorizationEndpoint string `json:"authorization_endpoint"`
	TokenEndpoint         string `json:"token_endpoint"`
	ClientID              string `json:"client_id"`
	Scope                 string `json:"scope"`
	Resource              string `json:"resource"`
}

// ErrNoWebSignIn: no issuer has a web client.
var ErrNoWebSignIn = errors.New("no issuer has a web_client_id")

// WebSignIn returns the first issuer with a web client, discovered.
func (v *Verifier) WebSignIn(ctx context.Context) (WebSignIn, error) {
	for _, is := range v.cfg.Issuers {
		if is.WebClientID == "" {
			continue
		}
		st, err := v.state(ctx, is.Issuer)
		if err != nil {
			return WebSignIn{}, err
		}
		ep, _ := st.endpoint()
		scope := strings.Join(append([]string{oidc.ScopeOpenID}, is.RequiredScopes...), " ")
		return WebSignIn{Issuer: is.Issuer, AuthorizationEndpoint: ep.AuthURL, TokenEndpoint: ep.TokenURL,
			ClientID: is.WebClientID, Scope: scope, Resource: v.cfg.Resource}, nil
	}
	return WebSignIn{}, ErrNoWebSignIn
}

// WebOrigins are the origins the web page posts to for sign-in, for its
// CSP: each issuer with a web client, and its token endpoint's once
// discovered.
func (v *Verifier) WebOrigins() []string {
	var out []string
	add := func(raw string) {
		if u, err := url.Parse(raw); err == nil && u.Host != "" && !slices.Contains(out, u.Scheme+"://"+u.Host) {
			out = append(out, u.Scheme+"://"+u.Host)
		}
	}
	for _, is := range v.cfg.Issuers {
		if is.WebClientID == "" {
			continue
		}
		add(is.Issuer)
		if ep, ok := v.issuer[issuerKey(is.Issuer)].endpoint(); ok {
			add(ep.TokenURL)
		}
	}
	return out
}

func jwksURL(p *oidc.Provider) string {
	var m struct {
		JWKS string `json:"jwks_uri"`
	}
	_ = p.Claims(&m)
	return m.JWKS
}

// unverifiedIssuer reads iss from raw's payload, only to pick the verifier
// that then checks everything, iss included.
func unverifiedIssuer(raw string) (string, error) {
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		return "", errors.New("not a JWT")
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return "", fmt.Errorf("payload: %w", err)
	}
	var c struct {
		Iss string `json:"iss"`
	}
	if err := json.Unmarshal(payload, &c); err != nil || c.Iss == "" {
		return "", errors.New("no issuer in the token")
	}
	return c.Iss, nil
}

// grantedScopes reads "scope" (space-separated) or "scp" (a list).
func grantedScopes(claims map[string]any) []string {
	var out []string
	if s, ok := claims["scope"].(string); ok {
		out = append(out, strings.Fields(s)...)
	}
	if l, ok := claims["scp"].([]any); ok {
		for _, v := range l {
			if s, ok := v.(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

// claimHolds reports whether a claim is value, or a list containing it.
func claimHolds(claim any, value string) bool {
	switch c := claim.(type) {
	case string:
		return c == value
	case []any:
		for _, v := range c {
			if s, ok := v.(string); ok && s == value {
				return true
			}
		}
	}
	return false
}
