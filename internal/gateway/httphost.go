package gateway

import (
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
)

// IsLoopbackHost reports whether host (no port) names this machine.
func IsLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// hostOnly is the host of a Host header or address, without its port.
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}

// CheckPublicHost validates a name given to httpserve.Limits.PublicHosts: a bare
// host name, without scheme, path or port.
func CheckPublicHost(name string) error {
	if name == "" || strings.ContainsAny(name, "/:@ ?#[]") {
		return fmt.Errorf("public host %q: want a bare host name such as gateway.example.com (no scheme, port or path)", name)
	}
	return nil
}

// hostGuard refuses DNS rebinding: a request that arrives on a loopback
// address but names another host is a web page's script that made a name
// of its own resolve to this machine, unless the name is one of public,
// the names a reverse proxy on this machine forwards (docs/security.md "Behind a reverse proxy / TLS"). Requests arriving on other addresses came over the
// network and are not checked here. The Go SDK's own check knows no
// allow-list, so this one replaces it.
func hostGuard(public []string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
		if ok && local != nil && IsLoopbackHost(hostOnly(local.String())) {
			host := hostOnly(r.Host)
			if !IsLoopbackHost(host) && !slices.ContainsFunc(public, func(p string) bool { return strings.EqualFold(p, host) }) {
				http.Error(w, fmt.Sprintf("Forbidden: invalid Host header %q", r.Host), http.StatusForbidden)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}
