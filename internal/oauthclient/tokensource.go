package oauthclient

import (
	"context"
	"net/http"
	"sync"

	"golang.org/x/oauth2"
)

// savingSource hands out the record's token, refreshing it through oauth2
// when it expires, and writes each new token back to the store so the next
// process starts from it (a rotated refresh token is only good once).
type savingSource struct {
	store  Store
	client *http.Client

	mu  sync.Mutex
	rec Record
	src oauth2.TokenSource
}

// tokenSource returns a refreshing source for rec that persists refreshes.
// client carries the token requests (nil: http.DefaultClient).
func (s Store) tokenSource(rec *Record, client *http.Client) oauth2.TokenSource {
	ss := &savingSource{store: s, client: client, rec: *rec}
	ss.src = ss.refresher(rec.Token)
	return ss
}

func (s *savingSource) refresher(tok *oauth2.Token) oauth2.TokenSource {
	ctx := context.Background() // the source outlives any one request
	if s.client != nil {
		ctx = context.WithValue(ctx, oauth2.HTTPClient, s.client)
	}
	return s.rec.config().TokenSource(ctx, tok)
}

func (s *savingSource) Token() (*oauth2.Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	tok, err := s.src.Token()
	if err != nil {
		// Another process (a second pml, or pml connect) may have refreshed
		// first, spending the refresh token we hold: take what it saved.
		stored, lerr := s.store.Load(s.rec.ServerURL)
		if lerr != nil || stored.Token.AccessToken == s.rec.Token.AccessToken {
			return nil, err
		}
		s.rec = *stored
		s.src = s.refresher(stored.Token)
		return s.src.Token()
	}
	if tok.AccessToken != s.rec.Token.AccessToken {
		s.rec.Token = tok
		if err := s.store.Save(&s.rec); err != nil {
			return nil, err
		}
	}
	return tok, nil
}
