package gateway

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/pml-go/pml/internal/gateway/httpapi"
	"github.com/pml-go/pml/internal/httpserve"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/tokenauth"
)

// principalKey holds the principal in the SDK's TokenInfo.Extra.
const principalKey = "pml_principal"

// keyPrefix makes keys recognisable in configs (and to secret scanners).
const keyPrefix = "pml_"

// CreateKey makes a new API key for scope, stores its hash and returns the
// plaintext, which exists nowhere else afterwards.
func CreateKey(ctx context.Context, st store.Store, scope store.Scope) (string, error) {
	if scope.Org == "" || scope.Project == "" {
		return "", errors.New("create key: org and project are required")
	}
	if scope.Org == store.AllTenants.Org || scope.Project == store.AllTenants.Project {
		return "", errors.New(`create key: "*" stands for every tenant (an operator's token, docs/auth.md), not a project`)
	}
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("create key: %w", err)
	}
	key := keyPrefix + hex.EncodeToString(b[:])
	if err := st.CreateKey(ctx, store.APIKey{ID: newID(), Hash: HashKey(key), Scope: scope, CreatedAt: time.Now().UTC()}); err != nil {
		return "", fmt.Errorf("create key: %w", err)
	}
	return key, nil
}

// HashKey is how keys are stored and looked up.
func HashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// Verified keys are cached briefly so a busy client does not cost a database
// round trip per request; a key deleted on one replica stops working
// everywhere within keyCacheTTL.
const (
	keyCacheTTL  = 30 * time.Second
	keyCacheSize = 10_000
)

// errStoreDown distinguishes "the database is away" (503) from a bad key (401).
var errStoreDown = errors.New("key store unavailable")

// principal is who a request comes from: its tenant, its role there, and
// the name traces record (docs/auth.md).
type principal struct {
	Scope  store.Scope
	Role   tokenauth.Role
	Caller string // "key:ID" or "oidc:ISSUER_HOST:SUBJECT"
}

// needRole refuses, with 403, a principal whose role does not allow need,
// and an operator (every tenant: store.AllTenants) unless allTenants: an
// operator reads the all-tenants dashboard and acts in no tenant.
func (s *Service) needRole(need tokenauth.Role, allTenants bool, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, _ := r.Context().Value(principalCtxKey{}).(principal)
		switch {
		case !p.Role.Allows(need):
			refuse(w, http.StatusForbidden, "forbidden", fmt.Sprintf("the %s role may not do this; it needs %s", p.Role, need))
		case p.Scope == store.AllTenants && !allTenants:
			refuse(w, http.StatusForbidden, "forbidden", "an operator's token covers every tenant and reads only the dashboard; use a project's credential for the rest")
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// localPrincipal is the caller of local mode and of the package's in-process
// requests: the workspace itself, with every right.
// localCaller names the principal of local mode's package, which has no
// key: the workspace's own traces.
const localCaller = "local"

func localPrincipal(sc store.Scope) principal {
	return principal{Scope: sc, Role: tokenauth.RoleAdmin, Caller: localCaller}
}

// resourceMetadataURL is where the protected resource metadata of the
// gateway's resource is served (RFC 9728: the well-known path, then the
// resource's path).
func (s *Service) resourceMetadataURL() string {
	u, err := url.Parse(s.tokens.Resource())
	if err != nil {
		return ""
	}
	return u.Scheme + "://" + u.Host + wellKnownResource + strings.TrimSuffix(u.Path, "/")
}

// wellKnownResource is the RFC 9728 well-known path.
const wellKnownResource = "/.well-known/oauth-protected-resource"

// serveResourceMetadata serves the protected resource metadata: the
// resource, the issuers it trusts and the scopes it needs.
func (s *Service) serveResourceMetadata() http.Handler {
	return auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource:               s.tokens.Resource(),
		AuthorizationServers:   s.tokens.Issuers(),
		ScopesSupported:        s.tokens.Scopes(),
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "PML gateway",
	})
}

// serveWebSignIn tells the web page how to sign a person in (docs/auth.md):
// the issuer's endpoints and the page's client; 404 when no issuer has one.
func (s *Service) serveWebSignIn(w http.ResponseWriter, r *http.Request) {
	in, err := s.tokens.WebSignIn(r.Context())
	switch {
	case errors.Is(err, tokenauth.ErrNoWebSignIn):
		httpapi.Error(w, http.StatusNotFound, "not_found", "no issuer has a web client: use an API key")
	case err != nil:
		s.log.Error("web sign-in: issuer unavailable", "err", err)
		w.Header().Set("Retry-After", "10")
		httpapi.Error(w, http.StatusServiceUnavailable, "issuer_unavailable", "the issuer cannot be reached; retry shortly")
	default:
		httpapi.Write(w, http.StatusOK, in)
	}
}

// verify maps an API key to its principal: a key acts for its project with
// every right there (keys are what an operator hands out per project).
func (s *Service) verify(ctx context.Context, key string) (principal, error) {
	hash := HashKey(key)
	now := time.Now()
	if p, ok := s.keys.Get(hash, now); ok {
		return p, nil
	}
	k, err := s.store.KeyByHash(ctx, hash)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return principal{}, auth.ErrInvalidToken
	case err != nil:
		return principal{}, fmt.Errorf("%w: %w", errStoreDown, err)
	}
	p := principal{Scope: k.Scope, Role: tokenauth.RoleAdmin, Caller: "key:" + k.ID}
	s.keys.Put(hash, p, now)
	return p, nil
}

type principalCtxKey struct{}

// requireKey is the auth middleware for /mcp and /api: a valid key or, when
// the gateway trusts OpenID issuers, a valid access token (docs/auth.md), in
// Authorization: Bearer (a key also in x-api-key); else 401, or 403 for a
// token that lacks a scope or maps to no tenant; 503 when the key store or
// the issuer is away. It reads only headers: a request refused is answered
// before anything reads its body, and its connection is closed. The
// principal goes into the request context, where the MCP SDK picks it up as
// TokenInfo for tool handlers.
func (s *Service) requireKey(next http.Handler) http.Handler {
	// The SDK's middleware is the only way to hand TokenInfo to tool handlers;
	// its verifier just reads what we verified below.
	withTokenInfo := auth.RequireBearerToken(func(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
		p, _ := ctx.Value(principalCtxKey{}).(principal)
		return &auth.TokenInfo{UserID: p.Caller, Extra: map[string]any{principalKey: p}}, nil
	}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token := bearerToken(r)
		if token == "" {
			s.unauthorized(w, "", "an API key or access token is required: Authorization: Bearer <key or token>")
			return
		}
		p, err := s.authenticate(r.Context(), token)
		if err != nil {
			s.refuseAuth(w, err)
			return
		}
		httpserve.MarkAuthenticated(r.Context())
		noteTenant(r.Context(), p.Scope)
		r.Header.Set("Authorization", "Bearer "+token)
		withTokenInfo.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), principalCtxKey{}, p)))
	})
}

// authenticate maps a bearer credential to its principal: an API key, or an
// access token of a trusted issuer.
func (s *Service) authenticate(ctx context.Context, token string) (principal, error) {
	if s.tokens == nil || strings.HasPrefix(token, keyPrefix) || !tokenauth.LooksLikeJWT(token) {
		return s.verify(ctx, token)
	}
	id, err := s.tokens.Verify(ctx, token)
	if err != nil {
		return principal{}, err
	}
	return principal{Scope: id.Scope, Role: id.Role, Caller: id.Caller()}, nil
}

// refuseAuth answers a credential authenticate refused.
func (s *Service) refuseAuth(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, auth.ErrInvalidToken):
		s.unauthorized(w, "invalid_token", "invalid API key")
	case errors.Is(err, tokenauth.ErrInvalidToken):
		s.unauthorized(w, "invalid_token", "invalid access token: "+err.Error())
	case errors.Is(err, tokenauth.ErrInsufficientScope):
		s.challenge(w, "insufficient_scope")
		refuse(w, http.StatusForbidden, "insufficient_scope", err.Error())
	case errors.Is(err, tokenauth.ErrNoTenant):
		refuse(w, http.StatusForbidden, "no_tenant", "the token is valid but maps to no tenant of this gateway: "+err.Error()+"; ask an operator to add a tenant rule (docs/auth.md)")
	case errors.Is(err, tokenauth.ErrIssuerUnavailable):
		s.log.Error("auth: issuer unavailable", "err", err)
		w.Header().Set("Retry-After", "10")
		httpapi.Error(w, http.StatusServiceUnavailable, "issuer_unavailable", "the token's issuer cannot be reached to check it; retry shortly")
	default:
		s.log.Error("auth: key store unavailable", "err", err)
		httpapi.Error(w, http.StatusServiceUnavailable, "store_unavailable", "the gateway cannot reach its database; retry shortly")
	}
}

// authRealm names the gateway in its WWW-Authenticate challenge.
const authRealm = "pml"

// unauthorized is the 401 answer; the connection is closed, since a body
// may follow that nobody will read.
func (s *Service) unauthorized(w http.ResponseWriter, bearerError, msg string) {
	s.challenge(w, bearerError)
	refuse(w, http.StatusUnauthorized, "unauthorized", msg)
}

// challenge sets WWW-Authenticate. Without trusted issuers it names plain
// Bearer keys and no authorization server, so an MCP client asks its user
// for a key rather than starting OAuth discovery; with them, it points at
// the protected resource metadata (RFC 9728), where an MCP client finds
// the issuers to sign in with, and names the scopes.
func (s *Service) challenge(w http.ResponseWriter, bearerError string) {
	c := `Bearer realm="` + authRealm + `"`
	if bearerError != "" {
		c += `, error="` + bearerError + `"`
	}
	if s.tokens != nil {
		c += `, resource_metadata="` + s.resourceMetadataURL() + `"`
		if scopes := s.tokens.Scopes(); len(scopes) > 0 {
			c += `, scope="` + strings.Join(scopes, " ") + `"`
		}
	}
	w.Header().Set("WWW-Authenticate", c)
}

func bearerToken(r *http.Request) string {
	if f := strings.Fields(r.Header.Get("Authorization")); len(f) == 2 && strings.EqualFold(f[0], "bearer") {
		return f[1]
	}
	return strings.TrimSpace(r.Header.Get("X-Api-Key"))
}

// tenantOf is scopeFrom for httpserve's body budget: a tenant's request
// bodies count against its share.
func tenantOf(r *http.Request) (any, bool) { return scopeFrom(r) }

// refuse answers a request whose body stays unread, and closes the
// connection after the answer.
func refuse(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Connection", "close")
	httpapi.Error(w, status, code, msg)
}

// scopeFrom returns the tenant requireKey attached to r.
func scopeFrom(r *http.Request) (store.Scope, bool) {
	p, ok := r.Context().Value(principalCtxKey{}).(principal)
	return p.Scope, ok
}
