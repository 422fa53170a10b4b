package oauthclient

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// callback is the loopback listener the authorization server redirects the
// browser to: http://127.0.0.1:PORT/callback, a port of the system's choice.
type callback struct {
	redirectURL string
	srv         *http.Server
	results     chan url.Values
}

func listenCallback() (*callback, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening for the OAuth redirect: %w", err)
	}
	cb := &callback{
		redirectURL: "http://" + ln.Addr().String() + "/callback",
		results:     make(chan url.Values, 1),
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /callback", func(w http.ResponseWriter, r *http.Request) {
		select {
		case cb.results <- r.URL.Query():
			fmt.Fprintln(w, "pml: authorization received; you can close this window.")
		default:
			http.Error(w, "pml: an authorization was already received", http.StatusConflict)
		}
	})
	cb.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = cb.srv.Serve(ln) }()
	return cb, nil
}

func (cb *callback) close() { _ = cb.srv.Close() }

// wait returns the query of the first redirect that reaches the listener.
func (cb *callback) wait(ctx context.Context) (url.Values, error) {
	select {
	case q := <-cb.results:
		return q, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for the browser's authorization: %w", ctx.Err())
	}
}

// fetchCode gets the authorization response for authURL: headless, by
// following the server's redirects up to the redirect URL; otherwise
// through the browser (or a printed URL) and the loopback listener.
func fetchCode(ctx context.Context, o ConnectOptions, cb *callback, authURL string) (*auth.AuthorizationResult, error) {
	fmt.Fprintf(o.Out, "Authorize pml at:\n  %s\n", authURL)
	var q url.Values
	var err error
	if o.Headless {
		q, err = followRedirects(ctx, o.HTTPClient, authURL, cb.redirectURL)
	} else {
		if o.OpenBrowser == nil || o.OpenBrowser(ctx, authURL) != nil {
			fmt.Fprintln(o.Out, "Open that URL in a browser on this machine; waiting for the redirect.")
		}
		q, err = cb.wait(ctx)
	}
	if err != nil {
		return nil, err
	}
	if e := q.Get("error"); e != "" {
		return nil, fmt.Errorf("the authorization server refused: %s %s", e, q.Get("error_description"))
	}
	if q.Get("code") == "" {
		return nil, errors.New("the authorization server's redirect carries no code")
	}
	return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
}

// maxRedirects bounds a headless authorization's redirect chain.
const maxRedirects = 10

// followRedirects GETs authURL and follows its redirects until one points
// at redirectURL, whose query it returns without requesting it.
func followRedirects(ctx context.Context, base *http.Client, authURL, redirectURL string) (url.Values, error) {
	client := http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if base != nil {
		client.Transport, client.Jar, client.Timeout = base.Transport, base.Jar, base.Timeout
	}
	next := authURL
	for range maxRedirects {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, next, nil)
		if err != nil {
			return nil, fmt.Errorf("authorization URL: %w", err)
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, fmt.Errorf("headless authorization: %w", err)
		}
		_ = resp.Body.Close()
		loc := resp.Header.Get("Location")
		if resp.StatusCode < 300 || resp.StatusCode > 399 || loc == "" {
			return nil, fmt.Errorf("headless authorization: %s answered %s without redirecting to pml; it needs a person, run pml connect without --headless", req.URL.Redacted(), resp.Status)
		}
		u, err := req.URL.Parse(loc)
		if err != nil {
			return nil, fmt.Errorf("headless authorization: bad redirect %q: %w", loc, err)
		}
		if sameEndpoint(u, redirectURL) {
			return u.Query(), nil
		}
		next = u.String()
	}
	return nil, fmt.Errorf("headless authorization: more than %d redirects", maxRedirects)
}

// sameEndpoint says u is redirectURL with some query.
func sameEndpoint(u *url.URL, redirectURL string) bool {
	r, err := url.Parse(redirectURL)
	return err == nil && strings.EqualFold(u.Scheme, r.Scheme) && strings.EqualFold(u.Host, r.Host) && u.Path == r.Path
}
