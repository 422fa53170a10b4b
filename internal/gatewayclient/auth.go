package gatewayclient

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync/atomic"

	"github.com/pml-go/pml/internal/approval"
	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/tracing"
	"github.com/pml-go/pml/internal/wire"
)

// AllowInsecureEnv, set to 1, lets the package talk plain http to a gateway
// that is not on this machine. Without it such a URL is refused: the API key
// and BYOK keys would cross the network in clear text.
const AllowInsecureEnv = "PML_ALLOW_INSECURE_HTTP"

// apiKeyEnv is the variable the gateway key is read from.
const apiKeyEnv = "PML_API_KEY"

// keySource says where the package found its gateway key, for the message
// of a refused key: the person must know which copy to replace.
type keySource struct {
	kind string // "environment", ".env", "none", or "given" (NewRemote's caller chose it)
	path string // the .env file, for ".env" and "none"
}

func (k keySource) String() string {
	switch k.kind {
	case "environment":
		return apiKeyEnv + " from the environment"
	case ".env":
		return apiKeyEnv + " from " + k.path
	case "given":
		return "the key the package was given"
	}
	return "no key (" + apiKeyEnv + " is set neither in the environment nor in " + k.path + ")"
}

// apiKey returns the gateway key by approval.Env's precedence (a non-empty
// process variable, else the workspace .env) and where it came from.
func apiKey(env *approval.Env, ws string) (string, keySource) {
	dotEnv := ws + string(os.PathSeparator) + ".env"
	if v := os.Getenv(apiKeyEnv); v != "" {
		return v, keySource{kind: "environment"}
	}
	if v, ok := env.Lookup(apiKeyEnv); ok && v != "" {
		return v, keySource{kind: ".env", path: dotEnv}
	}
	return "", keySource{kind: "none", path: dotEnv}
}

// checkCloudURL validates the gateway URL read from source (PML_CLOUD_URL or
// .pml.json's cloud.url): http or https with a host, and plain http only to
// this machine unless insecure is set on purpose.
func checkCloudURL(raw, source string, insecure bool) error {
	u, err := url.Parse(raw)
	bad := func(format string, args ...any) error {
		return pmlerr.New(pmlerr.InvalidConfig, "gateway URL %q (from %s): "+format, append([]any{raw, source}, args...)...).
			With("cloud_url", raw)
	}
	switch {
	case err != nil:
		return bad("%v", err)
	case u.Scheme != "http" && u.Scheme != "https":
		return bad("want an http:// or https:// URL")
	case u.Hostname() == "":
		return bad("no host")
	case u.User != nil:
		return bad("credentials do not belong in the URL; the key is PML_API_KEY")
	case u.Scheme == "http" && !IsLoopbackHost(u.Hostname()) && !insecure:
		return bad("plain http to another machine would send the API key and your BYOK keys in clear text; "+
			"use https, or set %s=1 if this network is trusted on purpose", AllowInsecureEnv)
	}
	return nil
}

// IsLoopbackHost reports whether host (no port) names this machine.
func IsLoopbackHost(host string) bool { return gateway.IsLoopbackHost(host) }

// Dial returns the client for the gateway at url, which the package read
// from source (PML_CLOUD_URL or .pml.json's cloud.url), after checking that
// the key would not cross the network in clear text. The key is PML_API_KEY
// by env's precedence (the process environment, else the workspace .env of
// ws); a refused key's error names where it came from. The gateway's
// certificate is verified with the system's roots plus CAFileEnv's. cacheDir
// is as for NewRemote.
func Dial(url, source string, env *approval.Env, ws, cacheDir string) (*Remote, error) {
	if err := checkCloudURL(url, source, insecureAllowed()); err != nil {
		return nil, err
	}
	roots, err := gatewayRoots(env, ws)
	if err != nil {
		return nil, err
	}
	key, ks := apiKey(env, ws)
	r := newRemote(url, key, cacheDir, roots)
	r.auth.source, r.urlSource = ks, source
	return r, nil
}

// insecureAllowed reads AllowInsecureEnv.
func insecureAllowed() bool { return os.Getenv(AllowInsecureEnv) == "1" }

// gatewayAuth is what the transport adds to requests for the gateway and how
// it explains a refusal.
type gatewayAuth struct {
	base   *url.URL // the gateway: the key goes to this scheme and host only
	key    string
	source keySource
}

// owns reports whether u is on the gateway's origin. A redirect elsewhere
// (or any other URL) never gets the key.
func (a *gatewayAuth) owns(u *url.URL) bool {
	return a.base != nil && strings.EqualFold(u.Scheme, a.base.Scheme) && strings.EqualFold(u.Host, a.base.Host)
}

// refused is the UNAUTHORIZED error of a 401 or 403 from the gateway. The
// gateway was reached, so this is never a NETWORK_ERROR: the package must
// not fall back to running offline as if it were away.
func (a *gatewayAuth) refused(resp *http.Response) error {
	what := "refused the API key"
	if a.source.kind == "none" {
		what = "requires an API key"
	}
	return pmlerr.New(pmlerr.Unauthorized,
		"gateway %s %s (HTTP %d %s). Key used: %s. Create a key on the gateway with `pml gateway key create --db DSN --org ORG --project PROJECT`, "+
			"set it as %s in the environment or the workspace .env (or run `pml init --cloud-url URL --api-key KEY`), then restart the PML package",
		a.base.Redacted(), what, resp.StatusCode, http.StatusText(resp.StatusCode), a.source, apiKeyEnv).
		With("key_source", a.source.kind).With("status", resp.StatusCode)
}

// headers adds what every request to the gateway carries, and turns the
// gateway's 401 and 403 into UNAUTHORIZED.
type headers struct {
	next    http.RoundTripper
	auth    *gatewayAuth
	localNS *atomic.Pointer[string] // the ClientNamespacesHeader value
}

func (h headers) RoundTrip(r *http.Request) (*http.Response, error) {
	if !h.auth.owns(r.URL) {
		return h.next.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	r.Header.Set(wire.ClientHeader, "package")
	if ns := h.localNS.Load(); ns != nil && *ns != "" {
		r.Header.Set(wire.ClientNamespacesHeader, *ns)
	}
	r.Header.Set(wire.TraceparentHeader, traceparent(r.Context()))
	if h.auth.key != "" {
		r.Header.Set("Authorization", "Bearer "+h.auth.key)
	}
	resp, err := h.next.RoundTrip(r)
	if err != nil || (resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden) {
		return resp, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	return nil, h.auth.refused(resp)
}

// traceparent is the W3C header of a request to the gateway: the trace of
// the run making it, or a fresh trace for a request outside any run.
func traceparent(ctx context.Context) string {
	id := tracing.TraceIDFrom(ctx)
	if id == "" {
		id = tracing.NewTraceID()
	}
	return tracing.Traceparent(id)
}
