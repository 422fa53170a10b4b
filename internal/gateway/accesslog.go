package gateway

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/textcut"
)

// accessLog writes one line per request when it is answered: method, path
// (no query; its first maxLoggedPath bytes, as anyone can send a path of
// the header limit's size), status, duration and tenant (org/project,
// empty before a key was accepted). Never a header, a key, a query or a
// body.
func (s *Service) accessLog(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &accessRecord{}
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r.WithContext(context.WithValue(r.Context(), accessCtxKey{}, rec)))
		status := sw.status
		if status == 0 {
			status = http.StatusOK
		}
		s.log.LogAttrs(r.Context(), slog.LevelInfo, "request",
			slog.String("method", r.Method), slog.String("path", textcut.Prefix(r.URL.Path, maxLoggedPath)), slog.Int("status", status),
			slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000), slog.String("tenant", rec.get()))
	})
}

// maxLoggedPath bounds the path an access line holds.
const maxLoggedPath = 512

type accessCtxKey struct{}

// accessRecord carries the tenant from the key check, deeper in the
// handler chain, back out to the access line.
type accessRecord struct {
	mu     sync.Mutex
	tenant string
}

func (a *accessRecord) get() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.tenant
}

// noteTenant records the tenant of an authenticated request for its
// access line.
func noteTenant(ctx context.Context, sc store.Scope) {
	if a, ok := ctx.Value(accessCtxKey{}).(*accessRecord); ok {
		a.mu.Lock()
		a.tenant = sc.Org + "/" + sc.Project
		a.mu.Unlock()
	}
}

// statusWriter remembers the status written. Unwrap and Flush keep the
// streaming answers (Server-Sent Events) and http.ResponseController
// working through it.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() { _ = http.NewResponseController(w.ResponseWriter).Flush() }

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
