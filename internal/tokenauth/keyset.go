package tokenauth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// maxKeySetBytes bounds an issuer's JWKS document.
const maxKeySetBytes = 1 << 20

// keySet is an issuer's JWKS, as the oidc.KeySet its verifier checks
// signatures with. VerifySignature never fetches: it checks against the
// keys held. ensure fetches them the first time, and again only for a key
// id it does not hold, at most once per Options.KeyRefetchInterval
// (docs/auth.md), so that tokens with forged signatures or made-up key ids
// cannot make the gateway hammer the issuer. Safe for concurrent use.
type keySet struct {
	url      string
	opts     Options
	fetching chan struct{} // one fetch at a time

	mu          sync.Mutex
	keys        []jose.JSONWebKey
	fetched     bool      // the first fetch was tried
	refetchedAt time.Time // the last fetch after the first
}

// ensure makes the keys raw's signature needs available, if the issuer
// lists them and the refetch interval allows asking.
func (k *keySet) ensure(ctx context.Context, raw string) error {
	kid, err := keyID(raw)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidToken, err)
	}
	if k.holds(kid) {
		return nil
	}
	select {
	case k.fetching <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("%w: waiting for the keys of %s: %w", ErrIssuerUnavailable, k.url, ctx.Err())
	}
	defer func() { <-k.fetching }()
	k.mu.Lock()
	if k.holdsLocked(kid) {
		k.mu.Unlock()
		return nil // fetched while this request waited
	}
	first := !k.fetched
	if !first && time.Since(k.refetchedAt) < k.opts.KeyRefetchInterval {
		k.mu.Unlock()
		k.opts.OnRefetchRefused()
		return fmt.Errorf("%w: key id %q is not among the issuer's keys (fetched again at most once per %v)",
			ErrInvalidToken, kid, k.opts.KeyRefetchInterval)
	}
	k.mu.Unlock()

	keys, err := k.fetch(ctx)
	k.mu.Lock()
	defer k.mu.Unlock()
	k.fetched = true
	if !first {
		k.refetchedAt = time.Now()
	}
	if err != nil {
		return fmt.Errorf("%w: fetching the keys of %s: %w", ErrIssuerUnavailable, k.url, err)
	}
	k.keys = keys
	return nil // a kid still unknown fails the signature check
}

func (k *keySet) holds(kid string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.holdsLocked(kid)
}

func (k *keySet) holdsLocked(kid string) bool {
	for _, key := range k.keys {
		if kid == "" || key.KeyID == kid {
			return true
		}
	}
	return false
}

// fetch reads the issuer's JWKS, within Options.DiscoveryTimeout; it does
// not end with the request that asked (others wait for it).
func (k *keySet) fetch(ctx context.Context) ([]jose.JSONWebKey, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), k.opts.DiscoveryTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, k.url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := k.opts.Client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxKeySetBytes+1))
	if err != nil {
		return nil, err
	}
	if len(body) > maxKeySetBytes {
		return nil, fmt.Errorf("key set over %d bytes", maxKeySetBytes)
	}
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(body, &set); err != nil {
		return nil, fmt.Errorf("key set: %w", err)
	}
	return set.Keys, nil
}

// VerifySignature checks jwt's signature against the keys held with its
// key id (every key held when it names none) and returns its payload.
func (k *keySet) VerifySignature(_ context.Context, jwt string) ([]byte, error) {
	jws, err := jose.ParseSigned(jwt, joseAlgs())
	if err != nil {
		return nil, fmt.Errorf("malformed jwt: %w", err)
	}
	kid := ""
	if len(jws.Signatures) > 0 {
		kid = jws.Signatures[0].Header.KeyID
	}
	k.mu.Lock()
	keys := k.keys
	k.mu.Unlock()
	for _, key := range keys {
		if kid != "" && key.KeyID != kid {
			continue
		}
		if payload, err := jws.Verify(key); err == nil {
			return payload, nil
		}
	}
	return nil, errors.New("no key of the issuer verifies the signature")
}

// keyID reads the kid of raw's header ("" when it has none).
func keyID(raw string) (string, error) {
	head, _, ok := strings.Cut(raw, ".")
	if !ok {
		return "", errors.New("not a JWT")
	}
	b, err := base64.RawURLEncoding.DecodeString(head)
	if err != nil {
		return "", fmt.Errorf("header: %w", err)
	}
	var h struct {
		Kid string `json:"kid"`
	}
	if err := json.Unmarshal(b, &h); err != nil {
		return "", fmt.Errorf("header: %w", err)
	}
	return h.Kid, nil
}

// joseAlgs are signingAlgs as go-jose names them.
func joseAlgs() []jose.SignatureAlgorithm {
	out := make([]jose.SignatureAlgorithm, len(signingAlgs))
	for i, a := range signingAlgs {
		out[i] = jose.SignatureAlgorithm(a)
	}
	return out
}
