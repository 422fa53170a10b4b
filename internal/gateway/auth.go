package gateway

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/pml-go/pml/internal/gateway/httpapi"
	"github.com/pml-go/pml/internal/store"
)

const scopeKey = "pml_scope"

// keyPrefix makes keys recognisable in configs (and to secret scanners).
const keyPrefix = "pml_"

// CreateKey makes a new API key for scope, stores its hash and returns the
// plaintext, which exists nowhere else afterwards.
func CreateKey(ctx context.Context, st store.Store, scope store.Scope) (string, error) {
	if scope.Org == "" || scope.Project == "" {
		return "", errors.New("create key: org and project are required")
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

// verify maps an API key to its tenant.
func (s *Service) verify(ctx context.Context, key string) (store.Scope, error) {
	hash := HashKey(key)
	now := time.Now()
	if sc, ok := s.keys.Get(hash, now); ok {
		return sc, nil
	}
	k, err := s.store.KeyByHash(ctx, hash)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return store.Scope{}, auth.ErrInvalidToken
	case err != nil:
		return store.Scope{}, fmt.Errorf("%w: %w", errStoreDown, err)
	}
	s.keys.Put(hash, k.Scope, now)
	return k.Scope, nil
}

type scopeCtxKey struct{}

// requireKey is the auth middleware for /mcp and /api: a valid key in
// Authorization: Bearer or x-api-key, else 401; 503 when the key store is
// away. It reads only headers: a request without a valid key is answered
// before anything reads its body, and its connection is closed. The tenant
// goes into the request context, where the MCP SDK picks it up as TokenInfo
// for tool handlers.
func (s *Service) requireKey(next http.Handler) http.Handler {
	// The SDK's middleware is the only way to hand TokenInfo to tool handlers;
	// its verifier just reads what we verified below.
	withTokenInfo := auth.RequireBearerToken(func(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
		sc, _ := ctx.Value(scopeCtxKey{}).(store.Scope)
		return &auth.TokenInfo{UserID: sc.Org + "/" + sc.Project, Extra: map[string]any{scopeKey: sc}}, nil
	}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := bearerToken(r)
		if key == "" {
			unauthorized(w, "", "an API key is required: Authorization: Bearer <key> or x-api-key")
			return
		}
		sc, err := s.verify(r.Context(), key)
		switch {
		case errors.Is(err, auth.ErrInvalidToken):
			unauthorized(w, "invalid_token", "invalid API key")
			return
		case err != nil:
			s.log.Error("auth: key store unavailable", "err", err)
			httpapi.Error(w, http.StatusServiceUnavailable, "store_unavailable", "the gateway cannot reach its database; retry shortly")
			return
		}
		markAuthenticated(r.Context())
		noteTenant(r.Context(), sc)
		r.Header.Set("Authorization", "Bearer "+key)
		withTokenInfo.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), scopeCtxKey{}, sc)))
	})
}

// authRealm names the gateway in its WWW-Authenticate challenge.
const authRealm = "pml"

// unauthorized is the 401 answer. The challenge names plain Bearer keys and
// no authorization server, so an MCP client asks its user for a key rather
// than starting OAuth discovery; the connection is closed, since a body may
// follow that nobody will read.
func unauthorized(w http.ResponseWriter, bearerError, msg string) {
	challenge := `Bearer realm="` + authRealm + `"`
	if bearerError != "" {
		challenge += `, error="` + bearerError + `"`
	}
	w.Header().Set("WWW-Authenticate", challenge)
	refuse(w, http.StatusUnauthorized, "unauthorized", msg)
}

func bearerToken(r *http.Request) string {
	if f := strings.Fields(r.Header.Get("Authorization")); len(f) == 2 && strings.EqualFold(f[0], "bearer") {
		return f[1]
	}
	return strings.TrimSpace(r.Header.Get("X-Api-Key"))
}

// scopeFrom returns the tenant requireKey attached to r.
func scopeFrom(r *http.Request) (store.Scope, bool) {
	sc, ok := r.Context().Value(scopeCtxKey{}).(store.Scope)
	return sc, ok
}
