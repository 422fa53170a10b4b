package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"

	"github.com/pml-go/pml/internal/etag"
	"github.com/pml-go/pml/internal/gateway/httpapi"
	"github.com/pml-go/pml/internal/httpserve"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/registry"
	"github.com/pml-go/pml/internal/registry/fqdn"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/wire"
)

// serveRegistryEntry is GET /mcp/{fqdn} (docs/protocol.md "Registry").
func (s *Service) serveRegistryEntry(w http.ResponseWriter, r *http.Request) {
	sc, _ := scopeFrom(r)
	raw := r.PathValue("fqdn")
	n, err := fqdn.ParseAnyHash(raw)
	if err != nil {
		// A malformed name is in no registry. A well-formed name with a
		// four-character hash that is not hex parses, and answers
		// hash_mismatch like any other wrong hash.
		httpapi.Error(w, http.StatusNotFound, "not_found", "MCP '"+raw+"' not in registry: "+err.Error())
		return
	}
	e, err := s.registry.Get(r.Context(), sc, n)
	var mismatch *registry.HashMismatchError
	switch {
	case errors.As(err, &mismatch):
		httpapi.Write(w, http.StatusNotFound, map[string]string{
			"error": "hash_mismatch", "message": mismatch.Error(), "currentFqdn": mismatch.Current.FQDN()})
		return
	case errors.Is(err, registry.ErrNotFound):
		httpapi.Error(w, http.StatusNotFound, "not_found", "MCP '"+n.Base()+"' not in registry")
		return
	case err != nil:
		s.log.Error("registry lookup", "fqdn", raw, "err", err)
		httpapi.Error(w, http.StatusServiceUnavailable, "store_unavailable", "the gateway cannot reach its database; retry shortly")
		return
	}
	if s.withheld(e) {
		// Stored before such code stopped being learned: never served.
		httpapi.Error(w, http.StatusForbidden, "secret_withheld",
			"MCP '"+n.Base()+"' holds a literal secret in its code and is not served; pass the value as an argument instead")
		return
	}
	h := w.Header()
	if n.Hash == "" {
		// "Current" changes with every new version: never cache the redirect.
		h.Set("Cache-Control", "no-cache")
		h.Set("Location", "/mcp/"+e.FQDN())
		w.WriteHeader(http.StatusFound)
		return
	}
	h.Set("X-PML-Type", string(e.Type))
	h.Set("X-PML-Routing", string(e.Routing))
	h.Set("ETag", e.ETag())
	// A five-part name is content-addressed, so it may be cached for an
	// hour; but a tenant's non-public capability must not sit in a shared
	// cache for the next client of the same URL.
	if e.Shared {
		h.Set("Cache-Control", "public, max-age=3600")
	} else {
		h.Set("Cache-Control", "private, max-age=3600")
	}
	if etag.NoneMatch(r.Header.Get("If-None-Match"), e.ETag()) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", e.ContentType())
	h.Set("Content-Length", strconv.Itoa(len(e.Body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(e.Body)
	}
}

// serveCatalog is GET /mcp when the client does not ask for an event stream
// (docs/protocol.md "Registry"): ?type=code|stdio|http, ?name=ns:action,
// ?page=, ?limit=.
func (s *Service) serveCatalog(w http.ResponseWriter, r *http.Request) {
	sc, _ := scopeFrom(r)
	o, err := listOptions(r.URL.Query())
	if err != nil {
		httpapi.Error(w, http.StatusBadRequest, "bad_request", err.Error())
		return
	}
	c, err := s.registry.List(r.Context(), sc, o)
	if err != nil {
		s.log.Error("registry catalog", "err", err)
		httpapi.Error(w, http.StatusServiceUnavailable, "store_unavailable", "the gateway cannot reach its database; retry shortly")
		return
	}
	w.Header().Set("Cache-Control", "private, no-cache")
	httpapi.Write(w, http.StatusOK, c)
}

// listOptions reads the catalog's parameters. A limit over
// registry.MaxLimit is refused, as GET /api/traces refuses one over its
// maximum, rather than quietly shortened.
func listOptions(q url.Values) (registry.ListOptions, error) {
	typ, err := registry.ParseType(q.Get("type"))
	if err != nil {
		return registry.ListOptions{}, err
	}
	page, err := httpapi.PositiveParam("page", q.Get("page"), 1, httpapi.MaxPage)
	if err != nil {
		return registry.ListOptions{}, err
	}
	limit, err := httpapi.PositiveParam("limit", q.Get("limit"), registry.DefaultLimit, registry.MaxLimit)
	if err != nil {
		return registry.ListOptions{}, err
	}
	return registry.ListOptions{Type: typ, Name: q.Get("name"), Page: page, Limit: limit}, nil
}

// mcpOrCatalog sends GET /mcp to the MCP handler when the client asks for
// an event stream (the Streamable HTTP GET), else to the catalog.
func (s *Service) mcpOrCatalog(mcpHandler http.Handler) http.Handler {
	catalog := http.HandlerFunc(s.serveCatalog)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
			mcpHandler.ServeHTTP(w, r)
			return
		}
		catalog.ServeHTTP(w, r)
	})
}

// serveLearn is POST /api/v1/capabilities: the package reports code it ran
// successfully on the user's machine, which is saved like a gateway run.
// The answer is the execute success answer's capability field.
func (s *Service) serveLearn(w http.ResponseWriter, r *http.Request) {
	sc, _ := scopeFrom(r)
	var req wire.LearnRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		httpapi.Error(w, http.StatusBadRequest, "bad_request", "capability report: "+err.Error())
		return
	}
	ref, err := s.LearnLocal(r.Context(), Caller{Scope: sc, IsPackage: true, ClientNamespaces: clientNamespaces(r.Header)}, req)
	switch {
	case err != nil && pmlerr.CodeOf(err, pmlerr.Internal) == pmlerr.Internal:
		s.log.Error("learning a local run", "err", err)
		httpapi.Error(w, http.StatusServiceUnavailable, "store_unavailable", "the gateway cannot save the capability; retry shortly")
	case err != nil:
		httpapi.Write(w, http.StatusBadRequest, wire.ErrorAnswer(err, ""))
	case ref == nil:
		w.WriteHeader(http.StatusNoContent)
	default:
		httpapi.Write(w, http.StatusOK, ref)
	}
}

// LocalTransport serves the registry and the capability report to an HTTP
// client in this process, as scope, without a network or a key: the
// package's registry client uses it in local mode exactly as it uses a
// remote gateway.
func (s *Service) LocalTransport(scope store.Scope) http.RoundTripper {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /mcp/{fqdn}", s.serveRegistryEntry)
	mux.HandleFunc("GET /mcp", s.serveCatalog)
	mux.HandleFunc("POST /api/v1/capabilities", s.serveLearn)
	return localTransport{h: httpserve.LimitBodies(mux, httpserve.Limits{}), scope: scope}
}

type localTransport struct {
	h     http.Handler
	scope store.Scope
}

func (t localTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if err := r.Context().Err(); err != nil {
		return nil, err
	}
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, r.WithContext(context.WithValue(r.Context(), principalCtxKey{}, localPrincipal(t.scope))))
	resp := rec.Result()
	resp.Request = r
	return resp, nil
}
