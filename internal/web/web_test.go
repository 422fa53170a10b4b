package web_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pml-go/pml/internal/web"
)

func get(t *testing.T, h http.Handler, path, etag string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	if etag != "" {
		req.Header.Set("If-None-Match", etag)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

func TestHandlerServesThePage(t *testing.T) {
	h := web.Handler(web.GatewayPage, nil)
	for path, ctype := range map[string]string{"/": "text/html", "/ui/app.js": "javascript", "/ui/style.css": "text/css"} {
		resp := get(t, h, path, "")
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK || !strings.Contains(resp.Header.Get("Content-Type"), ctype) || len(body) == 0 {
			t.Errorf("GET %s: %d %q (%d bytes)", path, resp.StatusCode, resp.Header.Get("Content-Type"), len(body))
		}
		csp := resp.Header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "connect-src 'self'") || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: security headers %v", path, resp.Header)
		}
		if r := get(t, h, path, resp.Header.Get("ETag")); r.StatusCode != http.StatusNotModified {
			t.Errorf("GET %s revalidation: %d", path, r.StatusCode)
		}
	}
	for _, path := range []string{"/ui/", "/ui/nope.js", "/ui/../web.go", "/index.html"} {
		if r := get(t, h, path, ""); r.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", path, r.StatusCode)
		}
	}
}

// The page loads nothing from elsewhere: no absolute URL in its files.
func TestAssetsAreSelfContained(t *testing.T) {
	h := web.Handler(web.GatewayPage, nil)
	for _, path := range []string{"/", "/ui/app.js", "/ui/style.css"} {
		body, _ := io.ReadAll(get(t, h, path, "").Body)
		for _, bad := range []string{"http://", "https://", "//cdn", "@import"} {
			if strings.Contains(strings.ReplaceAll(string(body), "http://www.w3.org/2000/svg", ""), bad) {
				t.Errorf("%s contains %q", path, bad)
			}
		}
	}
}

// TestRevalidationMatchesWholeTags: a 304 only for an If-None-Match naming
// the asset's ETag whole, never for a tag that merely contains it.
func TestRevalidationMatchesWholeTags(t *testing.T) {
	h := web.Handler(web.GatewayPage, nil)
	tag := get(t, h, "/ui/app.js", "").Header.Get("ETag")
	bare := strings.Trim(tag, `"`)
	for inm, want := range map[string]int{
		tag:                    http.StatusNotModified,
		`"x", W/` + tag:        http.StatusNotModified,
		"*":                    http.StatusNotModified,
		`"0` + tag + `"`:       http.StatusOK,
		`"` + bare + `0"`:      http.StatusOK,
		`"0` + bare + `", "y"`: http.StatusOK,
		bare:                   http.StatusOK,
	} {
		if r := get(t, h, "/ui/app.js", inm); r.StatusCode != want {
			t.Errorf("If-None-Match %s: %d, want %d", inm, r.StatusCode, want)
		}
	}
}
