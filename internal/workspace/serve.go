package workspace

import (
	"bytes"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/pml-go/pml/internal/gatewayclient"
)

// ServeTokenFile is where `pml serve` keeps the workspace's bearer token,
// under StateDir, readable by its owner only.
const ServeTokenFile = "serve-token"

// ServeOptions configure the package's Streamable HTTP endpoint.
type ServeOptions struct {
	// Token is the bearer token every request must carry. Empty means no
	// token is required: only `pml serve --no-auth` asks for that.
	Token string
}

// HTTPHandler serves the package's MCP server over Streamable HTTP for
// `pml serve`. The endpoint runs tools on this machine with the user's
// rights, so it answers only its AI client: a request with an Origin that
// is not this server's own loopback origin is 403 (a web page the browser
// opened cannot drive it), and one without the workspace token is 401 (nor
// can another local process that cannot read .pml/). The SDK's own check
// refuses a loopback request whose Host is not loopback (DNS rebinding).
func (p *Workspace) HTTPHandler(o ServeOptions) http.Handler {
	srv := p.NewMCPServer()
	var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	if o.Token != "" {
		h = requireToken(o.Token, h)
	}
	return sameOriginOnly(h)
}

// sameOriginOnly refuses a request whose Origin is not a loopback origin on
// the port it arrived at. A request without Origin is a local client (not a
// browser page) and goes on to the token check.
func sameOriginOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if origin := r.Header.Get("Origin"); origin != "" && !ownOrigin(origin, localPort(r)) {
			http.Error(w, "Forbidden: cross-origin requests to the PML package are refused", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// ownOrigin reports whether origin is http://<loopback host>:port.
func ownOrigin(origin, port string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Scheme != "http" || u.User != nil || (u.Path != "" && u.Path != "/") || port == "" {
		return false
	}
	return u.Port() == port && gatewayclient.IsLoopbackHost(u.Hostname())
}

// localPort is the port the request arrived at.
func localPort(r *http.Request) string {
	addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return ""
	}
	_, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return ""
	}
	return port
}

// requireToken answers 401 to a request without the workspace token.
func requireToken(token string, next http.Handler) http.Handler {
	want := []byte(token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f := strings.Fields(r.Header.Get("Authorization"))
		if len(f) != 2 || !strings.EqualFold(f[0], "bearer") || subtle.ConstantTimeCompare([]byte(f[1]), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="pml"`)
			http.Error(w, "Unauthorized: send Authorization: Bearer <the token in .pml/"+ServeTokenFile+">", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// serveTokenLen is the token's length in hex digits (256 bits).
const serveTokenLen = 64

// ServeToken returns the workspace's `pml serve` token, creating it on first
// use in .pml/serve-token with mode 0600. The file is created complete (a
// private temp file linked into place), so a concurrent `pml init` and
// `pml serve` agree on one token. A token file that others may read is
// refused: anyone who read it could drive the package.
func ServeToken(ws string) (string, error) {
	path := filepath.Join(ws, StateDir, ServeTokenFile)
	for range 2 {
		tok, err := readServeToken(path)
		if !errors.Is(err, os.ErrNotExist) {
			return tok, err
		}
		if err := createServeToken(path); err != nil && !errors.Is(err, os.ErrExist) {
			return "", err
		}
	}
	return readServeToken(path)
}

func readServeToken(path string) (string, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("%s: must be a regular file only its owner can read (mode 0600, is %v); fix it with chmod 600, or delete it and run `pml init` again", path, fi.Mode())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	tok := string(bytes.TrimSpace(data))
	if len(tok) != serveTokenLen {
		return "", fmt.Errorf("%s: not a PML serve token; delete it and run `pml init` again", path)
	}
	return tok, nil
}

func createServeToken(path string) error {
	var b [serveTokenLen / 2]byte
	if _, err := rand.Read(b[:]); err != nil {
		return fmt.Errorf("serve token: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("serve token: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ServeTokenFile+".tmp-*") // mode 0600
	if err != nil {
		return fmt.Errorf("serve token: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.WriteString(hex.EncodeToString(b[:]) + "\n")
	if err = errors.Join(err, tmp.Sync(), tmp.Close()); err != nil {
		return fmt.Errorf("serve token: %w", err)
	}
	// Link fails if the file exists: whoever links first wins, whole.
	if err := os.Link(tmp.Name(), path); err != nil {
		return fmt.Errorf("serve token: %w", err)
	}
	return nil
}
