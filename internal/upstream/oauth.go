package upstream

import (
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/pml-go/pml/internal/oauthclient"
	"github.com/pml-go/pml/internal/pmlerr"
)

// oauthHandler is the OAuth handler of an http server's session, or nil
// for a server without OAuth. Token requests use the pool's connections
// but not the server's configured headers (those are for the server).
func (s *Server) oauthHandler() (auth.OAuthHandler, error) {
	client := &http.Client{Transport: s.pool.transport}
	switch {
	case s.cfg.Auth != nil:
		return oauthclient.NewClientCredentialsHandler(oauthclient.ClientCredentials{
			ClientID: s.cfg.Auth.ClientID, ClientSecret: s.cfg.Auth.ClientSecret, Issuer: s.cfg.Auth.Issuer,
		}, client)
	case s.cfg.StoredOAuth:
		store, err := oauthclient.DefaultStore()
		if err != nil {
			return nil, pmlerr.Wrap(pmlerr.Unauthorized, err)
		}
		return oauthclient.NewStoredHandler(store, s.cfg.URL, client)
	}
	return nil, nil
}

// unauthorized says err is (or wraps) an UNAUTHORIZED refusal.
func unauthorized(err error) bool {
	return pmlerr.CodeOf(err, "") == pmlerr.Unauthorized
}
