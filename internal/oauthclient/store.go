// Package oauthclient is the client side of MCP authorization for upstream
// servers: `pml connect` runs the authorization-code flow with PKCE through
// the MCP SDK's handler and keeps the tokens in the user's config directory;
// an upstream marked "auth": "oauth" reuses (and refreshes) them; a hosted
// gateway server can use the client-credentials grant instead.
package oauthclient

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/oauth2"
)

// Record is what is kept per server: the client the authorization server
// knows us as (registered dynamically, pre-registered or a metadata
// document URL), its endpoints and the current token. Holding the client and
// token endpoint lets a later process refresh the token on its own.
type Record struct {
	ServerURL    string           `json:"server_url"`
	ClientID     string           `json:"client_id"`
	ClientSecret string           `json:"client_secret,omitempty"`
	AuthStyle    oauth2.AuthStyle `json:"auth_style,omitempty"`
	AuthURL      string           `json:"auth_url,omitempty"`
	TokenURL     string           `json:"token_url"`
	Scopes       []string         `json:"scopes,omitempty"`
	Token        *oauth2.Token    `json:"token"`
}

// config is the oauth2 configuration the record's token refreshes with.
func (r *Record) config() *oauth2.Config {
	return &oauth2.Config{
		ClientID:     r.ClientID,
		ClientSecret: r.ClientSecret,
		Endpoint:     oauth2.Endpoint{AuthURL: r.AuthURL, TokenURL: r.TokenURL, AuthStyle: r.AuthStyle},
		Scopes:       r.Scopes,
	}
}

// Store is the directory of token files: one per server, named by a hash
// of the server URL so the URL (which may carry a tenant name) is not
// spelled out in a directory listing.
type Store struct{ Dir string }

// DefaultStore is os.UserConfigDir()/pml/oauth: per user, never inside a
// workspace (a workspace is often shared or committed).
func DefaultStore() (Store, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return Store{}, fmt.Errorf("locating the user config directory for OAuth tokens: %w", err)
	}
	return Store{Dir: filepath.Join(dir, "pml", "oauth")}, nil
}

// Path is the token file of serverURL.
func (s Store) Path(serverURL string) string {
	sum := sha256.Sum256([]byte(serverURL))
	return filepath.Join(s.Dir, hex.EncodeToString(sum[:])+".json")
}

// ErrNoToken is returned by Load when nothing is stored for a server.
var ErrNoToken = errors.New("no stored OAuth token")

// Load reads the record of serverURL; ErrNoToken when there is none.
func (s Store) Load(serverURL string) (*Record, error) {
	data, err := os.ReadFile(s.Path(serverURL))
	if errors.Is(err, os.ErrNotExist) {
		return nil, ErrNoToken
	}
	if err != nil {
		return nil, fmt.Errorf("reading the OAuth token of %s: %w", serverURL, err)
	}
	var r Record
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("OAuth token file %s is damaged (%v); run pml connect %s again", s.Path(serverURL), err, serverURL)
	}
	if r.ServerURL != serverURL || r.Token == nil || r.TokenURL == "" {
		return nil, ErrNoToken
	}
	return &r, nil
}

// Save writes r atomically (a temporary file renamed over the old one, so
// a concurrent reader never sees half a file), mode 0600 in a 0700
// directory: the file holds a bearer credential.
func (s Store) Save(r *Record) error {
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", s.Dir, err)
	}
	// MkdirAll leaves an existing directory's mode alone.
	if err := os.Chmod(s.Dir, 0o700); err != nil {
		return fmt.Errorf("restricting %s: %w", s.Dir, err)
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the OAuth token of %s: %w", r.ServerURL, err)
	}
	tmp, err := os.CreateTemp(s.Dir, ".token-*")
	if err != nil {
		return fmt.Errorf("saving the OAuth token of %s: %w", r.ServerURL, err)
	}
	defer os.Remove(tmp.Name()) // no-op once renamed
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("saving the OAuth token of %s: %w", r.ServerURL, err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("saving the OAuth token of %s: %w", r.ServerURL, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("saving the OAuth token of %s: %w", r.ServerURL, err)
	}
	if err := os.Rename(tmp.Name(), s.Path(r.ServerURL)); err != nil {
		return fmt.Errorf("saving the OAuth token of %s: %w", r.ServerURL, err)
	}
	return nil
}
