package gateway

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/pml-go/pml/internal/buildinfo"
	"github.com/pml-go/pml/internal/httpserve"
	"github.com/pml-go/pml/internal/tokenauth"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/etag"
	"github.com/pml-go/pml/internal/gateway/httpapi"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/web"
	"github.com/pml-go/pml/internal/wire"
)

// Handler is the gateway's whole HTTP surface within the default
// httpserve.Limits. HTTPServer serves it with the connection bounds too.
func (s *Service) Handler() http.Handler { return s.handler(httpserve.Limits{}) }

// HTTPServer returns the gateway's HTTP server: Handler's surface within lim.
func (s *Service) HTTPServer(lim httpserve.Limits) *httpserve.Server {
	return httpserve.New(s.handler(lim), lim, s.log)
}

func (s *Service) handler(lim httpserve.Limits) http.Handler {
	return s.handlerWith(lim, true)
}

// handlerWith is handler, with the direct tools/call path (directCalls) or
// with the SDK's handler serving every MCP request.
func (s *Service) handlerWith(lim httpserve.Limits, direct bool) http.Handler {
	tools := s.mcpTools()
	srv := newMCPServer(tools)
	// Stateless: every request carries everything it needs, so any replica
	// behind a round-robin load balancer can serve it (no session affinity).
	// The end of a request (its client gone or cancelling) cancels its
	// handler; the SDK does this for clients of protocol 2026-07-28 on (the
	// package's), as a stateless session sees no notifications/cancelled,
	// and ownRuns for every version.
	// hostGuard replaces the SDK's DNS rebinding check, which has no
	// allow-list for a reverse proxy's host names.
	opts := mcp.StreamableHTTPOptions{Stateless: true, PropagateRequestCancellation: true, Logger: s.log, DisableLocalhostProtection: true}
	stream := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &opts)
	opts.JSONResponse = true
	plain := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &opts)
	var mcpHandler http.Handler = plainUnlessProgress(stream, plain)
	if direct {
		mcpHandler = newDirectCalls(tools, mcpHandler, s.log)
	}
	mcpHandler = hostGuard(lim.PublicHosts, mcpHandler)

	// The key is checked before any body is read: a request without one
	// gets its 401 from the headers alone.
	bodies := httpserve.NewBodyLimiter(lim)
	// Each route needs a role (docs/auth.md): viewers read, members run;
	// an operator reads the all-tenants dashboard only.
	route := func(need tokenauth.Role, allTenants bool) func(http.Handler) http.Handler {
		return func(h http.Handler) http.Handler {
			return s.requireKey(s.needRole(need, allTenants, bodies.Buffer(h, tenantOf)))
		}
	}
	viewer, member, admin := route(tokenauth.RoleViewer, false), route(tokenauth.RoleMember, false), route(tokenauth.RoleAdmin, false)
	mux := http.NewServeMux()
	mux.Handle("POST /mcp", member(s.refuseWhileDraining(s.shedLoad(s.ownRuns(mcpHandler)))))
	mux.Handle("GET /mcp", viewer(s.mcpOrCatalog(mcpHandler)))
	mux.Handle("GET /mcp/{fqdn}", viewer(http.HandlerFunc(s.serveRegistryEntry)))
	mux.Handle("POST "+wire.ExecutePath, member(s.refuseWhileDraining(s.shedLoad(http.HandlerFunc(s.serveExecute)))))
	mux.Handle("POST /api/v1/capabilities", member(http.HandlerFunc(s.serveLearn)))
	mux.Handle("DELETE /mcp", member(mcpHandler))
	mux.Handle("GET /api/v1/routing", viewer(http.HandlerFunc(s.serveRouting)))
	mux.Handle("POST /api/v1/client-tools", member(http.HandlerFunc(s.serveClientTools)))
	mux.Handle("POST /api/traces", member(http.HandlerFunc(s.traces.ServePost)))
	mux.Handle("GET /api/traces", viewer(http.HandlerFunc(s.traces.ServeList)))
	mux.Handle("GET /api/traces/{id}", viewer(http.HandlerFunc(s.traces.ServeTree)))
	mux.Handle("GET /api/keys", admin(http.HandlerFunc(s.serveListKeys)))
	mux.Handle("POST /api/keys", admin(http.HandlerFunc(s.serveCreateKey)))
	mux.Handle("DELETE /api/keys/{id}", admin(http.HandlerFunc(s.serveDeleteKey)))
	mux.Handle("GET /api/dashboard", route(tokenauth.RoleViewer, true)(http.HandlerFunc(s.serveDashboard)))
	if s.tokens != nil {
		meta := s.serveResourceMetadata()
		mux.Handle("GET "+wellKnownResource, meta)
		mux.Handle("GET "+wellKnownResource+"/{path...}", meta)
	}
	// The trace viewer: static, no key (the API calls it makes carry one).
	var signInOrigins func() []string
	if s.tokens != nil {
		signInOrigins = s.tokens.WebOrigins
		mux.HandleFunc("GET /api/auth/web", s.serveWebSignIn)
	}
	ui := web.Handler(web.GatewayPage, signInOrigins)
	mux.Handle("GET /{$}", ui)
	mux.Handle("GET /ui/", ui)
	mux.Handle("GET /dashboard", ui)
	mux.HandleFunc("GET /healthz", s.serveHealth)
	mux.HandleFunc("GET /readyz", s.serveReady)
	// No /metrics here: MetricsHandler serves it on the operator's listener.
	return s.accessLog(bodies.Deadline(s.traceContext(mux)))
}

// plainUnlessProgress answers a POST as plain JSON unless its client asked
// for progress (docs/how-it-works.md "Replicas"): only an event stream carries
// the request's notifications ahead of its answer, and a request without a
// progress token gets none, so its answer goes out without the stream's
// framing, flushes and parsing. The key is looked for in the raw body: code
// naming it is an escaped string and does not match, and a body with the
// key anywhere else gets a stream, which is as correct.
func plainUnlessProgress(stream, plain http.Handler) http.Handler {
	token := []byte(`"progressToken"`)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if b, ok := httpserve.Buffered(r); ok && r.Method == http.MethodPost && !bytes.Contains(b, token) {
			plain.ServeHTTP(w, r)
			return
		}
		stream.ServeHTTP(w, r)
	})
}

func (s *Service) serveRouting(w http.ResponseWriter, r *http.Request) {
	body, tag := s.rules.JSON()
	w.Header().Set("ETag", tag)
	w.Header().Set("Cache-Control", "no-cache")
	if etag.NoneMatch(r.Header.Get("If-None-Match"), tag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

// serveClientTools takes a package's report of the tools on its machine.
func (s *Service) serveClientTools(w http.ResponseWriter, r *http.Request) {
	sc, _ := scopeFrom(r)
	var report wire.ClientToolsReport
	if err := json.NewDecoder(r.Body).Decode(&report); err != nil {
		httpapi.Error(w, http.StatusBadRequest, "bad_request", "client tools report: "+err.Error())
		return
	}
	err := s.ReportClientTools(r.Context(), Caller{Scope: sc, IsPackage: true}, report.ClientID, report.Tools)
	switch {
	case pmlerr.CodeOf(err, "") == pmlerr.InvalidRequest:
		httpapi.Error(w, http.StatusBadRequest, "bad_request", pmlerr.Message(err))
		return
	case err != nil:
		s.log.Error("storing client tools", "err", err)
		httpapi.Error(w, http.StatusServiceUnavailable, "store_unavailable", "the client tools could not be stored; retry shortly")
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Service) serveHealth(w http.ResponseWriter, r *http.Request) {
	if err := s.Ping(r.Context()); err != nil {
		httpapi.Error(w, http.StatusServiceUnavailable, "store_unavailable", err.Error())
		return
	}
	// status stays "ok" while a hosted server fails: the gateway itself is
	// live; servers says which ones work.
	httpapi.Write(w, http.StatusOK, health{Status: "ok", Version: buildinfo.Read().Version, Build: buildinfo.Read(), Servers: s.serverStatuses()})
}

type health struct {
	Status  string                       `json:"status"`
	Version string                       `json:"version"`
	Build   buildinfo.Info               `json:"build"`
	Servers map[string]wire.ServerStatus `json:"servers,omitempty"`
}
