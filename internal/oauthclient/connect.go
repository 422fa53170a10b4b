package oauthclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// ConnectOptions are `pml connect`'s.
type ConnectOptions struct {
	URL   string
	Store Store
	// Headless follows the authorization server's redirects itself instead
	// of waiting for a browser (authorization servers that need no user).
	Headless bool
	// OpenBrowser opens a URL in the user's browser; nil or an error means
	// there is none, and the URL is only printed.
	OpenBrowser func(ctx context.Context, url string) error
	// Out receives what a person reads: the authorization URL, progress.
	Out io.Writer
	// ClientID and ClientSecret are a client registered beforehand with the
	// authorization server, for servers without dynamic registration.
	ClientID, ClientSecret string
	// ClientMetadataURL is an https URL of a client ID metadata document,
	// used as the client ID where the authorization server supports it.
	ClientMetadataURL string
	// Call, when set, is a tool called once after listing (with CallArgs).
	Call     string
	CallArgs map[string]any
	// HTTPClient carries every request (nil: http.DefaultClient).
	HTTPClient *http.Client
}

// Result is what a connect found.
type Result struct {
	Tools      []*mcp.Tool
	CallResult *mcp.CallToolResult
	// Authorized says a flow ran (false: the stored token was still good).
	Authorized bool
}

// Connect opens a Streamable HTTP session to the server. A stored token is
// tried first; when the server challenges, the SDK's authorization-code
// handler discovers the authorization server, registers (client ID
// metadata document, pre-registered client or dynamic registration, as the
// server supports) and runs the flow with PKCE; the tokens are then saved.
func Connect(ctx context.Context, o ConnectOptions) (*Result, error) {
	if o.Out == nil {
		o.Out = io.Discard
	}
	httpClient := o.HTTPClient
	if httpClient == nil {
		httpClient = http.DefaultClient
	}
	cb, err := listenCallback()
	if err != nil {
		return nil, err
	}
	defer cb.close()

	res := &Result{}
	fetch := func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		res.Authorized = true
		return fetchCode(ctx, o, cb, args.URL)
	}
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:              cb.redirectURL,
		AuthorizationCodeFetcher: fetch,
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs: []string{cb.redirectURL},
			ClientName:   "pml",
			GrantTypes:   []string{"authorization_code", "refresh_token"},
		}},
		RequestRefreshToken: true,
		Client:              httpClient,
		NewTokenSource: func(_ context.Context, c *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
			rec := &Record{ServerURL: o.URL, ClientID: c.ClientID, ClientSecret: c.ClientSecret, AuthStyle: c.Endpoint.AuthStyle,
				AuthURL: c.Endpoint.AuthURL, TokenURL: c.Endpoint.TokenURL, Scopes: c.Scopes, Token: tok}
			if err := o.Store.Save(rec); err != nil {
				return nil, err
			}
			return o.Store.tokenSource(rec, httpClient), nil
		},
	}
	if o.ClientMetadataURL != "" {
		cfg.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: o.ClientMetadataURL}
	}
	if o.ClientID != "" {
		cfg.PreregisteredClient = &oauthex.ClientCredentials{ClientID: o.ClientID}
		if o.ClientSecret != "" {
			cfg.PreregisteredClient.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: o.ClientSecret}
		}
	}
	switch rec, err := o.Store.Load(o.URL); {
	case err == nil:
		cfg.InitialTokenSource = o.Store.tokenSource(rec, httpClient)
	case !errors.Is(err, ErrNoToken):
		fmt.Fprintf(o.Out, "ignoring the stored token: %v\n", err)
	}
	handler, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		return nil, fmt.Errorf("OAuth client: %w", err)
	}

	client := mcp.NewClient(&mcp.Implementation{Name: "pml", Version: "1.0.0"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: o.URL, HTTPClient: httpClient, OAuthHandler: handler}, nil)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", o.URL, err)
	}
	defer cs.Close()
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("listing the tools of %s: %w", o.URL, err)
		}
		res.Tools = append(res.Tools, tool)
	}
	if o.Call != "" {
		args := o.CallArgs
		if args == nil {
			args = map[string]any{} // servers refuse null arguments
		}
		res.CallResult, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: o.Call, Arguments: args})
		if err != nil {
			return nil, fmt.Errorf("calling %s on %s: %w", o.Call, o.URL, err)
		}
	}
	// A flow that ran without a token source (a server that challenged but
	// let the session through) leaves nothing to save; say so rather than
	// let the next use fail unexplained.
	if ts, _ := handler.TokenSource(ctx); ts == nil {
		if _, err := os.Stat(o.Store.Path(o.URL)); err != nil {
			fmt.Fprintf(o.Out, "%s asked for no authorization; nothing stored\n", o.URL)
		}
	}
	return res, nil
}
