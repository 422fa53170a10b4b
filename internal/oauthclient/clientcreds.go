package oauthclient

import (
	"context"
	"fmt"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/auth/extauth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// ClientCredentials configures the client-credentials grant of a hosted
// gateway server (docs/configuration.md, gateway `auth`).
type ClientCredentials struct {
	ClientID     string
	ClientSecret string
	// Issuer, when set, is the only authorization server the secret is sent
	// to: a server whose metadata names another issuer is refused.
	Issuer string
}

// NewClientCredentialsHandler returns the SDK's client-credentials handler
// (token endpoint and scopes discovered from the server's protected
// resource metadata and its authorization server's metadata; tokens
// fetched again when they expire), made safe for the concurrent requests
// of one pooled session.
func NewClientCredentialsHandler(cc ClientCredentials, client *http.Client) (auth.OAuthHandler, error) {
	h, err := extauth.NewClientCredentialsHandler(&extauth.ClientCredentialsHandlerConfig{
		Credentials: &oauthex.ClientCredentials{
			ClientID:         cc.ClientID,
			ClientSecretAuth: &oauthex.ClientSecretAuth{ClientSecret: cc.ClientSecret},
			Issuer:           cc.Issuer,
		},
		HTTPClient: client,
	})
	if err != nil {
		return nil, fmt.Errorf("client credentials: %w", err)
	}
	return &lockedHandler{h: h}, nil
}

// lockedHandler serialises a handler whose token source is replaced by
// Authorize without a lock of its own.
type lockedHandler struct {
	mu sync.Mutex
	h  auth.OAuthHandler
}

func (l *lockedHandler) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ts, err := l.h.TokenSource(ctx)
	if ts == nil || err != nil {
		return nil, err
	}
	return lockedSource{mu: &l.mu, ts: ts}, nil
}

func (l *lockedHandler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.h.Authorize(ctx, req, resp)
}

// lockedSource takes the handler's lock for each token, since the source
// refetches (and so may race Authorize) when the token expires.
type lockedSource struct {
	mu *sync.Mutex
	ts oauth2.TokenSource
}

func (s lockedSource) Token() (*oauth2.Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ts.Token()
}
