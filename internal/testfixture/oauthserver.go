package testfixture

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// OAuthServer is an OAuth 2.1 authorization server and an MCP server it
// protects, on one loopback listener: authorization server metadata,
// dynamic client registration, an authorization endpoint that approves at
// once (redirecting with a code, as a consented user would), a token
// endpoint checking client secrets and PKCE S256, refresh (rotating the
// refresh token) and client credentials. The MCP endpoint /mcp serves
// `echo` and `whoami` behind auth.RequireBearerToken.
type OAuthServer struct {
	URL    string // the MCP endpoint
	Issuer string // the authorization server (the listener's origin)

	// ClientID and ClientSecret are a pre-registered confidential client,
	// the only one allowed the client_credentials grant.
	ClientID, ClientSecret string

	mu       sync.Mutex
	ttl      time.Duration
	clients  map[string]oauthClient
	codes    map[string]codeGrant
	access   map[string]time.Time // access token → expiry
	refresh  map[string]string    // refresh token → client ID
	issued   []string             // every access and refresh token handed out
	grants   map[string]int       // token requests answered, by grant type
	authReqs int
}

type oauthClient struct {
	secret   string
	redirect []string
}

type codeGrant struct {
	client, redirect, challenge string
}

// StartOAuthServer starts the servers; they stop when the test ends.
func StartOAuthServer(t testing.TB) *OAuthServer {
	t.Helper()
	s := &OAuthServer{
		ClientID: "service-" + randomToken(), ClientSecret: randomToken(),
		ttl:     time.Hour,
		clients: map[string]oauthClient{}, codes: map[string]codeGrant{},
		access: map[string]time.Time{}, refresh: map[string]string{}, grants: map[string]int{},
	}
	s.clients[s.ClientID] = oauthClient{secret: s.ClientSecret}
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	s.Issuer, s.URL = srv.URL, srv.URL+"/mcp"
	prmURL := srv.URL + "/.well-known/oauth-protected-resource/mcp"

	mux.Handle("GET /.well-known/oauth-protected-resource/mcp", auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource: s.URL, AuthorizationServers: []string{s.Issuer}, ScopesSupported: []string{"tools"},
	}))
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", s.metadata)
	mux.HandleFunc("POST /register", s.register)
	mux.HandleFunc("GET /authorize", s.authorize)
	mux.HandleFunc("POST /token", s.token)

	mcpServer := mcp.NewServer(&mcp.Implementation{Name: "oauth-fixture", Version: "1.0.0"}, nil)
	mcp.AddTool(mcpServer, &mcp.Tool{Name: "echo", Description: "echoes text"},
		func(_ context.Context, _ *mcp.CallToolRequest, in struct {
			Text string `json:"text"`
		}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return mcpServer }, nil)
	mux.Handle("/mcp", auth.RequireBearerToken(s.verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: prmURL})(handler))
	return s
}

// SetTokenTTL sets the lifetime of access tokens issued from now on.
func (s *OAuthServer) SetTokenTTL(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ttl = d
}

// ExpireAccessTokens makes every access token issued so far invalid.
func (s *OAuthServer) ExpireAccessTokens() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for tok := range s.access {
		s.access[tok] = time.Now().Add(-time.Minute)
	}
}

// Grants is how many token requests of grantType were answered with a token.
func (s *OAuthServer) Grants(grantType string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.grants[grantType]
}

// AuthorizationRequests is how many authorization requests were approved.
func (s *OAuthServer) AuthorizationRequests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.authReqs
}

// Issued lists every access and refresh token handed out.
func (s *OAuthServer) Issued() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.issued)
}

func (s *OAuthServer) verify(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	exp, ok := s.access[token]
	if !ok || time.Now().After(exp) {
		return nil, auth.ErrInvalidToken
	}
	return &auth.TokenInfo{Scopes: []string{"tools"}, Expiration: exp}, nil
}

func (s *OAuthServer) metadata(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer":                                s.Issuer,
		"authorization_endpoint":                s.Issuer + "/authorize",
		"token_endpoint":                        s.Issuer + "/token",
		"registration_endpoint":                 s.Issuer + "/register",
		"response_types_supported":              []string{"code"},
		"grant_types_supported":                 []string{"authorization_code", "refresh_token", "client_credentials"},
		"code_challenge_methods_supported":      []string{"S256"},
		"token_endpoint_auth_methods_supported": []string{"client_secret_post", "client_secret_basic"},
		"scopes_supported":                      []string{"tools"},
	})
}

func (s *OAuthServer) register(w http.ResponseWriter, r *http.Request) {
	var meta oauthex.ClientRegistrationMetadata
	if err := json.NewDecoder(r.Body).Decode(&meta); err != nil || len(meta.RedirectURIs) == 0 {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_client_metadata"})
		return
	}
	id, secret := "client-"+randomToken(), randomToken()
	s.mu.Lock()
	s.clients[id] = oauthClient{secret: secret, redirect: meta.RedirectURIs}
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]any{
		"client_id": id, "client_secret": secret, "redirect_uris": meta.RedirectURIs,
		"token_endpoint_auth_method": "client_secret_post",
	})
}

func (s *OAuthServer) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.clients[q.Get("client_id")]
	redirect := q.Get("redirect_uri")
	switch {
	case !ok || !slices.Contains(c.redirect, redirect):
		http.Error(w, "unknown client or redirect_uri", http.StatusBadRequest)
		return
	case q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "":
		http.Error(w, "PKCE S256 and response_type=code required", http.StatusBadRequest)
		return
	}
	code := randomToken()
	s.codes[code] = codeGrant{client: q.Get("client_id"), redirect: redirect, challenge: q.Get("code_challenge")}
	s.authReqs++
	u, _ := url.Parse(redirect)
	v := u.Query()
	v.Set("code", code)
	v.Set("state", q.Get("state"))
	u.RawQuery = v.Encode()
	http.Redirect(w, r, u.String(), http.StatusFound)
}

func (s *OAuthServer) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request"})
		return
	}
	id, secret, basic := r.BasicAuth()
	if !basic {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.clients[id]
	if !ok || subtle.ConstantTimeCompare([]byte(c.secret), []byte(secret)) != 1 {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
		return
	}
	grant := r.PostForm.Get("grant_type")
	switch grant {
	case "authorization_code":
		g, ok := s.codes[r.PostForm.Get("code")]
		delete(s.codes, r.PostForm.Get("code")) // one use, right or wrong
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		if !ok || g.client != id || g.redirect != r.PostForm.Get("redirect_uri") ||
			base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
			return
		}
	case "refresh_token":
		rt := r.PostForm.Get("refresh_token")
		if s.refresh[rt] != id {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
			return
		}
		delete(s.refresh, rt) // rotated: a refresh token is good once
	case "client_credentials":
		if id != s.ClientID {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unauthorized_client"})
			return
		}
	default:
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type"})
		return
	}
	s.grants[grant]++
	access := randomToken()
	s.access[access] = time.Now().Add(s.ttl)
	s.issued = append(s.issued, access)
	resp := map[string]any{"access_token": access, "token_type": "Bearer", "expires_in": int(s.ttl.Seconds()), "scope": "tools"}
	if grant != "client_credentials" {
		rt := randomToken()
		s.refresh[rt] = id
		s.issued = append(s.issued, rt)
		resp["refresh_token"] = rt
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, resp)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// randomToken is 32 random URL-safe characters: like a real token, long
// and token-like, so a leak check has something unmistakable to find.
func randomToken() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return strings.TrimRight(base64.RawURLEncoding.EncodeToString(b), "=")
}
