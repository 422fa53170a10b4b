package gateway

import (
	"math"
	"net/http"
	"strconv"

	"github.com/pml-go/pml/internal/gateway/httpapi"
)

// shedLoad refuses an authenticated MCP request, or a POST /api/v1/execute,
// with 429 and Retry-After when admission is saturated (every execution
// place taken and the queue full, or memory over the ceiling), before the
// request is parsed: under such load an execute would only be refused
// later, at a higher price.
func (s *Service) shedLoad(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		retry, shed := s.admission.Shed()
		if !shed {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(retry.Seconds()))))
		httpapi.Write(w, http.StatusTooManyRequests, map[string]any{
			"error":          "overloaded",
			"message":        "the gateway is overloaded: every execution place is taken and the queue is full, or its memory is short; retry later",
			"retry_after_ms": retry.Milliseconds(),
		})
	})
}
