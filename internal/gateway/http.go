package gateway

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/web"
)

// MaxRequestBytes bounds every request body; larger ones get 413.
const MaxRequestBytes = 1 << 20

// Handler is the gateway's whole HTTP surface (DESIGN.md).
func (s *Service) Handler() http.Handler {
	srv := s.NewMCPServer()
	// Stateless: every request carries everything it needs, so any replica
	// behind a round-robin load balancer can serve it (no session affinity).
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: s.log})

	mux := http.NewServeMux()
	mux.Handle("POST /mcp", s.requireKey(s.shedLoad(mcpHandler)))
	mux.Handle("GET /mcp", s.requireKey(s.mcpOrCatalog(mcpHandler)))
	mux.Handle("GET /mcp/{fqdn}", s.requireKey(http.HandlerFunc(s.serveRegistryEntry)))
	mux.Handle("POST /api/v1/capabilities", s.requireKey(http.HandlerFunc(s.serveLearn)))
	mux.Handle("DELETE /mcp", s.requireKey(mcpHandler))
	mux.Handle("GET /api/v1/routing", s.requireKey(http.HandlerFunc(s.serveRouting)))
	mux.Handle("POST /api/v1/client-tools", s.requireKey(http.HandlerFunc(s.serveClientTools)))
	mux.Handle("POST /api/traces", s.requireKey(http.HandlerFunc(s.servePostTraces)))
	mux.Handle("GET /api/traces", s.requireKey(http.HandlerFunc(s.serveListTraces)))
	mux.Handle("GET /api/traces/{id}", s.requireKey(http.HandlerFunc(s.serveTrace)))
	// The trace viewer: static, no key (the API calls it makes carry one).
	ui := web.Handler()
	mux.Handle("GET /{$}", ui)
	mux.Handle("GET /ui/", ui)
	mux.HandleFunc("GET /healthz", s.serveHealth)
	// No /metrics here: MetricsHandler serves it on the operator's listener.
	return limitBody(s.traceContext(mux))
}

func (s *Service) serveRouting(w http.ResponseWriter, r *http.Request) {
	body, etag := s.rules.JSON()
	w.Header().Set("ETag", etag)
	w.Header().Set("Cache-Control", "no-cache")
	if match := r.Header.Get("If-None-Match"); match != "" && strings.Contains(match, etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

// serveClientTools takes a package's report of the tools on its machine.
func (s *Service) serveClientTools(w http.ResponseWriter, r *http.Request) {
	sc, _ := scopeFrom(r)
	var report struct {
		ClientID string             `json:"client_id"`
		Tools    []store.ClientTool `json:"tools"`
	}
	if err := json.NewDecoder(r.Body).Decode(&report); err != nil {
		writeJSONError(w, http.StatusBadRequest, "bad_request", "client tools report: "+err.Error())
		return
	}
	if err := s.ReportClientTools(r.Context(), Caller{Scope: sc, IsPackage: true}, report.ClientID, report.Tools); err != nil {
		writeJSONError(w, http.StatusBadRequest, "bad_request", err.Error())
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Service) serveHealth(w http.ResponseWriter, r *http.Request) {
	if err := s.Ping(r.Context()); err != nil {
		writeJSONError(w, http.StatusServiceUnavailable, "store_unavailable", err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok", "version": Version})
}

// limitBody refuses bodies over MaxRequestBytes with 413 before any handler
// reads them. Bodies are small by contract, so buffering is cheap and gives a
// clean 413 even for chunked uploads.
func limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > MaxRequestBytes {
			writeJSONError(w, http.StatusRequestEntityTooLarge, "request_too_large", "request body over 1 MiB")
			return
		}
		if r.Body != nil && r.Body != http.NoBody {
			body, err := io.ReadAll(io.LimitReader(r.Body, MaxRequestBytes+1))
			if err != nil {
				writeJSONError(w, http.StatusBadRequest, "bad_request", "reading request body: "+err.Error())
				return
			}
			if len(body) > MaxRequestBytes {
				writeJSONError(w, http.StatusRequestEntityTooLarge, "request_too_large", "request body over 1 MiB")
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		next.ServeHTTP(w, r)
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeJSONError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, map[string]string{"error": code, "message": msg})
}
