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
	store Store
	src   oauth2.TokenSource

	mu     sync.Mutex
	rec    Record
	access string
}

// tokenSource returns a refreshing source for rec that persists refreshes.
// client carries the token requests (nil: http.DefaultClient).
func (s Store) tokenSource(rec *Record, client *http.Client) oauth2.TokenSource {
	ctx := context.Background() // the source outlives any one request
	if client != nil {
		ctx = context.WithValue(ctx, oauth2.HTTPClient, client)
	}
	return &savingSource{store: s, src: rec.config().TokenSource(ctx, rec.Token), rec: *rec, access: rec.Token.AccessToken}
}

func (s *savingSource) Token() (*oauth2.Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	tok, err := s.src.Token()
	if err != nil {
		return nil, err
	}
	if tok.AccessToken != s.access {
		s.rec.Token = tok
		if err := s.store.Save(&s.rec); err != nil {
			return nil, err
		}
		s.access = tok.AccessToken
	}
	return tok, nil
}
