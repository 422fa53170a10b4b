package oauthclient

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/testfixture"
)

func testConnect(t *testing.T, store Store, url string) *Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := Connect(ctx, ConnectOptions{URL: url, Store: store, Headless: true, Call: "echo", CallArgs: map[string]any{"text": "hi"}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// A headless connect runs the whole flow (metadata discovery, dynamic
// registration, PKCE, token exchange), stores the token privately and
// lists and calls the server's tools; a second connect reuses the token.
func TestConnectHeadlessStoresAndReuses(t *testing.T) {
	as := testfixture.StartOAuthServer(t)
	store := Store{Dir: filepath.Join(t.TempDir(), "pml", "oauth")}
	res := testConnect(t, store, as.URL)
	if !res.Authorized || len(res.Tools) != 1 || res.Tools[0].Name != "echo" || res.CallResult == nil || res.CallResult.IsError {
		t.Fatalf("result %+v", res)
	}
	fi, err := os.Stat(store.Path(as.URL))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v, mode %v", err, fi)
	}
	if di, err := os.Stat(store.Dir); err != nil || di.Mode().Perm() != 0o700 {
		t.Fatalf("token dir: %v, mode %v", err, di)
	}
	if entries, _ := os.ReadDir(store.Dir); len(entries) != 1 {
		t.Fatalf("token dir holds %d entries, want the one token file", len(entries))
	}
	if as.Grants("authorization_code") != 1 {
		t.Fatalf("code grants %d", as.Grants("authorization_code"))
	}

	res = testConnect(t, store, as.URL)
	if res.Authorized || as.AuthorizationRequests() != 1 {
		t.Fatalf("second connect ran a flow again: authorized %v, requests %d", res.Authorized, as.AuthorizationRequests())
	}
}

// An expired token is refreshed with the stored refresh token, and the
// new (rotated) pair is saved, so a third process refreshes again.
func TestStoredTokenRefreshes(t *testing.T) {
	as := testfixture.StartOAuthServer(t)
	store := Store{Dir: t.TempDir()}
	testConnect(t, store, as.URL)
	for round := 1; round <= 2; round++ {
		expireStored(t, store, as.URL)
		as.ExpireAccessTokens()
		before, _ := store.Load(as.URL)
		h, err := NewStoredHandler(store, as.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		ts, _ := h.TokenSource(context.Background())
		tok, err := ts.Token()
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		after, _ := store.Load(as.URL)
		if tok.AccessToken == before.Token.AccessToken || after.Token.AccessToken != tok.AccessToken ||
			after.Token.RefreshToken == before.Token.RefreshToken || as.Grants("refresh_token") != round {
			t.Fatalf("round %d: refresh not saved (refresh grants %d)", round, as.Grants("refresh_token"))
		}
	}
	if as.AuthorizationRequests() != 1 {
		t.Fatalf("a refresh ran the authorization flow again")
	}
}

// expireStored moves the stored token's expiry into the past, as time would.
func expireStored(t *testing.T, store Store, url string) {
	t.Helper()
	rec, err := store.Load(url)
	if err != nil {
		t.Fatal(err)
	}
	rec.Token.Expiry = time.Now().Add(-time.Hour)
	if err := store.Save(rec); err != nil {
		t.Fatal(err)
	}
}

// No token, a damaged file, or a token the server refuses: UNAUTHORIZED
// naming the command that fixes it.
func TestStoredHandlerRefusals(t *testing.T) {
	store := Store{Dir: t.TempDir()}
	const url = "http://127.0.0.1:9/mcp"
	_, err := NewStoredHandler(store, url, nil)
	if pmlerr.CodeOf(err, "") != pmlerr.Unauthorized || !strings.Contains(err.Error(), "pml connect "+url) {
		t.Fatalf("no token: %v", err)
	}
	if err := os.WriteFile(store.Path(url), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = NewStoredHandler(store, url, nil)
	if pmlerr.CodeOf(err, "") != pmlerr.Unauthorized || !strings.Contains(err.Error(), "damaged") {
		t.Fatalf("damaged file: %v", err)
	}
	// A file stored for another URL (a hash collision, or a copied file) is not used.
	other := &Record{ServerURL: "http://127.0.0.1:9/other", TokenURL: "http://127.0.0.1:9/token", Token: &oauth2Token}
	data, _ := json.Marshal(other)
	if err := os.WriteFile(store.Path(url), data, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Load(url); !errors.Is(err, ErrNoToken) {
		t.Fatalf("record of another URL: %v", err)
	}
	h := &StoredHandler{serverURL: url}
	rec := httptest.NewRecorder()
	rec.WriteHeader(http.StatusUnauthorized)
	err = h.Authorize(context.Background(), nil, rec.Result())
	if pmlerr.CodeOf(err, "") != pmlerr.Unauthorized || !strings.Contains(err.Error(), "refused the stored OAuth token") {
		t.Fatalf("refused: %v", err)
	}
}

// Headless cannot stand in for a person: an authorization server that
// shows a login page instead of redirecting is a clear error, not a hang.
func TestHeadlessNeedsRedirect(t *testing.T) {
	login := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("<form>password</form>"))
	}))
	defer login.Close()
	_, err := followRedirects(context.Background(), nil, login.URL+"/authorize", "http://127.0.0.1:1/callback")
	if err == nil || !strings.Contains(err.Error(), "without --headless") {
		t.Fatalf("login page: %v", err)
	}
	loop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/again", http.StatusFound)
	}))
	defer loop.Close()
	_, err = followRedirects(context.Background(), nil, loop.URL+"/authorize", "http://127.0.0.1:1/callback")
	if err == nil || !strings.Contains(err.Error(), "redirects") {
		t.Fatalf("redirect loop: %v", err)
	}
}

var oauth2Token = oauth2.Token{AccessToken: "x", Expiry: time.Now().Add(time.Hour)}

// Without --headless the browser (here an HTTP client following redirects,
// as a browser would) delivers the code to the loopback listener; with no
// browser the URL is printed and the listener still waits for it.
func TestConnectBrowserLoopback(t *testing.T) {
	as := testfixture.StartOAuthServer(t)
	browse := func(u string) {
		resp, err := http.Get(u)
		if err == nil {
			resp.Body.Close()
		}
	}
	for _, tc := range []struct {
		name string
		open func(context.Context, string) error
	}{
		{"browser", func(_ context.Context, u string) error { go browse(u); return nil }},
		{"no browser", func(context.Context, string) error { return errors.New("no display") }},
	} {
		store := Store{Dir: t.TempDir()}
		out := &urlWatcher{found: make(chan string, 1)}
		go func() {
			if u, ok := <-out.found; ok {
				browse(u)
			}
		}()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		o := ConnectOptions{URL: as.URL, Store: store, OpenBrowser: tc.open, Out: out}
		if tc.name == "browser" {
			o.Out = nil
		}
		res, err := Connect(ctx, o)
		cancel()
		close(out.found)
		if err != nil || !res.Authorized || len(res.Tools) != 1 {
			t.Fatalf("%s: %v %+v", tc.name, err, res)
		}
	}
}

// urlWatcher hands on the first URL printed after "Open that URL".
type urlWatcher struct {
	buf   strings.Builder
	found chan string
	sent  bool
}

func (w *urlWatcher) Write(p []byte) (int, error) {
	w.buf.Write(p)
	if s := w.buf.String(); !w.sent && strings.Contains(s, "Open that URL") {
		w.sent = true
		w.found <- strings.Fields(s[strings.Index(s, "http"):])[0]
	}
	return len(p), nil
}

// Two processes holding the same token: the first refresh spends the
// refresh token, and the second source, refused, takes the pair the first
// saved instead of failing.
func TestRefreshRaceAdoptsStoredToken(t *testing.T) {
	as := testfixture.StartOAuthServer(t)
	store := Store{Dir: t.TempDir()}
	testConnect(t, store, as.URL)
	expireStored(t, store, as.URL)
	rec, _ := store.Load(as.URL)
	first, second := store.tokenSource(rec, nil), store.tokenSource(rec, nil)
	a, err := first.Token()
	if err != nil {
		t.Fatal(err)
	}
	b, err := second.Token()
	if err != nil || b.AccessToken != a.AccessToken {
		t.Fatalf("second source: %v, same token %v", err, err == nil && b.AccessToken == a.AccessToken)
	}
	if as.Grants("refresh_token") != 1 {
		t.Fatalf("refresh grants %d, want 1", as.Grants("refresh_token"))
	}
}
