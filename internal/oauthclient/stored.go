package oauthclient

import (
	"context"
	"errors"
	"io"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"golang.org/x/oauth2"

	"github.com/pml-go/pml/internal/pmlerr"
)

// StoredHandler is the OAuth handler of an upstream configured with
// "auth": "oauth": it attaches the token `pml connect` stored, refreshing
// it when it expires, and never starts a flow of its own (a gateway or an
// AI client's session has nobody to send to a browser). A server that
// still refuses the token gets UNAUTHORIZED telling the user to connect.
type StoredHandler struct {
	serverURL string
	ts        oauth2.TokenSource
}

var _ auth.OAuthHandler = (*StoredHandler)(nil)

// NewStoredHandler loads the token of serverURL from store. Without one it
// fails with UNAUTHORIZED naming the command that makes one.
func NewStoredHandler(store Store, serverURL string, client *http.Client) (*StoredHandler, error) {
	rec, err := store.Load(serverURL)
	if errors.Is(err, ErrNoToken) {
		return nil, notConnected(serverURL, "has no stored OAuth token")
	}
	if err != nil {
		return nil, pmlerr.Wrap(pmlerr.Unauthorized, err).With("url", serverURL)
	}
	return &StoredHandler{serverURL: serverURL, ts: store.tokenSource(rec, client)}, nil
}

// TokenSource is the stored token, refreshed and saved as it expires.
func (h *StoredHandler) TokenSource(context.Context) (oauth2.TokenSource, error) {
	return h.ts, nil
}

// Authorize is called when the server answers 401 or 403: the stored token
// (or its refresh) was not enough, and only the user can fix that.
func (h *StoredHandler) Authorize(_ context.Context, _ *http.Request, resp *http.Response) error {
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return notConnected(h.serverURL, "refused the stored OAuth token (HTTP "+resp.Status+")")
}

func notConnected(serverURL, what string) *pmlerr.Error {
	return pmlerr.New(pmlerr.Unauthorized, "MCP server %s %s: run `pml connect %s` to authorize", serverURL, what, serverURL).
		With("url", serverURL)
}
