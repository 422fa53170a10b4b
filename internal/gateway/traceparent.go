package gateway

import (
	"context"
	"net/http"

	"github.com/pml-go/pml/internal/tracing"
	"github.com/pml-go/pml/internal/wire"
)

type remoteTraceKey struct{}

// traceContext reads the caller's traceparent. The request context then
// carries it: tracing.TraceIDFrom gives its trace id (a run the gateway
// starts on behalf of a package's run, such as a capability reached through
// call, takes it as its parent), remoteTrace the whole context (OTel links
// and logs). An invalid header is ignored, as W3C prescribes.
func (s *Service) traceContext(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := r.Header.Get(wire.TraceparentHeader)
		if h == "" {
			next.ServeHTTP(w, r)
			return
		}
		tc, err := tracing.ParseTraceparent(h)
		if err != nil {
			s.log.Debug("ignoring invalid traceparent", "path", r.URL.Path, "err", err)
			next.ServeHTTP(w, r)
			return
		}
		s.log.Debug("request", "method", r.Method, "path", r.URL.Path, "trace_id", tc.TraceID, "span_id", tc.ParentID)
		ctx := context.WithValue(r.Context(), remoteTraceKey{}, tc)
		ctx = tracing.WithTraceID(ctx, tc.TraceID)
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// remoteTrace returns the traceparent the request came with, or nil.
func remoteTrace(ctx context.Context) *tracing.TraceContext {
	tc, ok := ctx.Value(remoteTraceKey{}).(tracing.TraceContext)
	if !ok {
		return nil
	}
	return &tc
}
