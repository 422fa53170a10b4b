package gateway

import (
	"context"
	"net/http"

	"github.com/pml-go/pml/internal/store"
)

// TraceReader serves the trace viewer's read API (GET /api/traces and GET
// /api/traces/{id}, as Handler does) for one fixed scope and no key: local
// mode's `pml serve` and `pml traces` read the in-process gateway's traces
// with it, behind their own workspace token.
func (s *Service) TraceReader(scope store.Scope) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/traces", s.traces.ServeList)
	mux.HandleFunc("GET /api/traces/{id}", s.traces.ServeTree)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mux.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), principalCtxKey{}, localPrincipal(scope))))
	})
}
