// Package web is the gateway's trace viewer: one static page (HTML, CSS and
// vanilla JavaScript, embedded in the binary) that reads the JSON API with
// the user's API key. It loads nothing from anywhere else, and its Content
// Security Policy forbids it to.
package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"regexp"
	"strings"

	"github.com/pml-go/pml/internal/etag"
)

//go:embed assets
var assets embed.FS

// csp allows the page's own files and same-origin API calls, nothing else:
// no CDN, no inline script, no external request of any kind but to the
// connect origins given (an OpenID provider's token endpoint, for sign-in).
func csp(connect []string) string {
	src := "connect-src 'self'"
	for _, o := range connect {
		if plainOrigin.MatchString(o) { // nothing that could end the directive
			src += " " + o
		}
	}
	return "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
		src + "; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
}

var plainOrigin = regexp.MustCompile(`^https?://[A-Za-z0-9.-]+(:[0-9]+)?$`)

// asset is one embedded file, ready to serve.
type asset struct {
	body  []byte
	ctype string
	etag  string
}

// Page is which page Handler serves: the gateway's, which asks for an API
// key, or a workspace's (`pml serve`), which takes the workspace token from
// the address `pml serve` prints and lists the workspace's catalog.
type Page string

const (
	GatewayPage   Page = "gateway"
	WorkspacePage Page = "workspace"
)

// Handler serves the page at / and its files at /ui/NAME. It needs no key:
// the page holds no data; the API it calls does the authentication. The
// page's kind is marked on its <body> (data-page), which style.css and
// app.js read; an attribute, since the CSP allows no inline script.
// connect, when not nil, lists further origins the page may send requests
// to; it is asked on each request (an issuer's endpoints are discovered
// later than the handler is built).
func Handler(page Page, connect func() []string) http.Handler {
	files := map[string]asset{}
	err := fs.WalkDir(assets, "assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := assets.ReadFile(p)
		if err != nil {
			return err
		}
		if p == "assets/index.html" {
			body = bytes.Replace(body, []byte("<body>"), []byte(`<body data-page="`+string(page)+`">`), 1)
		}
		sum := sha256.Sum256(body)
		ctype := mime.TypeByExtension(path.Ext(p))
		files[strings.TrimPrefix(p, "assets/")] = asset{body: body, ctype: ctype, etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
		return nil
	})
	if err != nil {
		panic("web: reading embedded assets: " + err.Error()) // a build defect, not a runtime condition
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(r.URL.Path, "/ui/")
		switch r.URL.Path {
		case "/":
			name = "index.html"
		case "/dashboard":
			name = "dashboard.html"
		}
		a, ok := files[name]
		if !ok {
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		var origins []string
		if connect != nil {
			origins = connect()
		}
		h.Set("Content-Security-Policy", csp(origins))
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-cache")
		h.Set("ETag", a.etag)
		if etag.NoneMatch(r.Header.Get("If-None-Match"), a.etag) {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		h.Set("Content-Type", a.ctype)
		_, _ = w.Write(a.body)
	})
}
