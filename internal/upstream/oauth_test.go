package upstream_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/oauthclient"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/testfixture"
	"github.com/pml-go/pml/internal/upstream"
)

// An "auth": "oauth" server without a stored token fails at once with
// UNAUTHORIZED naming `pml connect`, and with no start back-off: the call
// right after the user connects succeeds. A token the server stops
// accepting mid-session is UNAUTHORIZED too, and ends the session, so the
// call after a new connect uses the new token.
func TestStoredOAuthServer(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", home)
	as := testfixture.StartOAuthServer(t)
	p, _ := newPool(t, upstream.Options{})
	s := p.Add(upstream.ServerConfig{Name: "notes", Type: upstream.TypeHTTP, URL: as.URL, StoredOAuth: true})
	connect := func() {
		t.Helper()
		store, err := oauthclient.DefaultStore()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(store.Dir, home) {
			t.Fatalf("store %s outside the test's config dir", store.Dir)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := oauthclient.Connect(ctx, oauthclient.ConnectOptions{URL: as.URL, Store: store, Headless: true}); err != nil {
			t.Fatal(err)
		}
	}

	_, err := s.Call(ctxTimeout(t, 10*time.Second), "echo", []byte(`{"text":"a"}`))
	if pe := wantCode(t, err, pmlerr.Unauthorized); !strings.Contains(pe.Message, "pml connect "+as.URL) || pe.Details["server"] != "notes" {
		t.Fatalf("no token: %+v", pe)
	}
	connect()
	if got := string(call(t, s, "echo", `{"text":"a"}`)); !strings.Contains(got, "a") {
		t.Fatalf("after connect: %s", got)
	}

	as.ExpireAccessTokens() // revoked on the server's side; the client still thinks it good
	_, err = s.Call(ctxTimeout(t, 10*time.Second), "echo", []byte(`{"text":"b"}`))
	if pe := wantCode(t, err, pmlerr.Unauthorized); !strings.Contains(pe.Message, "refused the stored OAuth token") {
		t.Fatalf("revoked: %+v", pe)
	}
	connect()
	if got := string(call(t, s, "echo", `{"text":"c"}`)); !strings.Contains(got, "c") {
		t.Fatalf("after connecting again: %s", got)
	}
	if as.AuthorizationRequests() != 2 {
		t.Fatalf("authorization requests %d, want 2", as.AuthorizationRequests())
	}
}
