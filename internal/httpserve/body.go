package httpserve

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/pml-go/pml/internal/gateway/httpapi"
	"github.com/pml-go/pml/internal/wire"
)

// BodyLimiter bounds request bodies: how long one may take to arrive
// (a read deadline on the connection), how large it may be, and how many
// bytes of bodies are held in memory at once, over all requests and per
// tenant.
type BodyLimiter struct {
	timeout time.Duration
	budget  *bodyBudget
}

// NewBodyLimiter is a BodyLimiter within lim. Deadline goes in front of
// everything, Buffer after the key check (a request without a valid key never
// has its body read).
func NewBodyLimiter(lim Limits) *BodyLimiter {
	lim = lim.withDefaults()
	return &BodyLimiter{timeout: lim.BodyTimeout, budget: newBodyBudget(lim.MaxBufferedBytes)}
}

// LimitBodies bounds the bodies of h's requests within lim (see
// Limits): a handler behind it reads a body already in memory.
func LimitBodies(h http.Handler, lim Limits) http.Handler {
	b := NewBodyLimiter(lim)
	return b.Deadline(b.Buffer(h, nil))
}

// TenantOf names the tenant of a request, a comparable value, for the
// tenant's share of the body budget; false: none.
type TenantOf func(*http.Request) (any, bool)

// bodyState is what Deadline tells Buffer about a request's body.
type bodyState struct {
	deadline time.Time
	read     bool // buffer read the whole body
}

type bodyStateKey struct{}

// Deadline sets the connection's read deadline for a request with a body,
// before anything else runs, so whoever reads the body cannot wait on it
// longer. A body that was not read whole (no valid key, a refusal, a route
// that takes none) is not drained either: the answer closes the connection,
// and the deadline moves to now, since the server would otherwise read up to
// 256 KiB of what is left before closing. Requests without a body keep no
// deadline, so a long-lived event stream is never cut.
func (b *BodyLimiter) Deadline(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hasBody(r) {
			next.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		st := &bodyState{deadline: time.Now().Add(b.timeout)}
		_ = rc.SetReadDeadline(st.deadline) // unsupported only off a real connection
		w.Header().Set("Connection", "close")
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), bodyStateKey{}, st)))
		if !st.read {
			_ = rc.SetReadDeadline(time.Now())
		}
	})
}

func hasBody(r *http.Request) bool {
	return r.ContentLength != 0 && r.Body != nil && r.Body != http.NoBody
}

// Buffer reads the body into memory within the byte budget and hands next a
// request whose body is that buffer. It runs after authentication, so a
// request without a valid key never has its body read. Bodies are small by
// contract, so buffering is cheap and gives a clean 413 even for chunked
// uploads. A request it refuses gets Connection: close, since what is left
// of its body still sits on the connection.
// tenantOf (nil: none) names the tenant whose share the body counts against.
func (b *BodyLimiter) Buffer(next http.Handler, tenantOf TenantOf) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hasBody(r) {
			next.ServeHTTP(w, r)
			return
		}
		if r.ContentLength > wire.MaxRequestBytes {
			refuse(w, http.StatusRequestEntityTooLarge, "request_too_large", "request body over 1 MiB")
			return
		}
		st, ok := r.Context().Value(bodyStateKey{}).(*bodyState)
		if !ok {
			st = &bodyState{deadline: time.Now().Add(b.timeout)}
		}
		// A body of unknown length (chunked) reserves the largest size and
		// gives back what it did not use.
		reserved := r.ContentLength
		if reserved < 0 {
			reserved = wire.MaxRequestBytes + 1
		}
		// Waiting for room takes at most half the body timeout, so a body
		// let in has at least the other half to arrive: bodies that stall
		// are let in at a bounded rate rather than one after another just
		// before their deadlines, each holding a fresh buffer.
		wait, cancel := context.WithDeadline(r.Context(), time.Now().Add(time.Until(st.deadline)/2))
		var scope any
		tenanted := false
		if tenantOf != nil {
			scope, tenanted = tenantOf(r)
		}
		held, err := b.budget.reserve(wait, scope, tenanted, reserved)
		cancel()
		if err != nil {
			if r.Context().Err() == nil {
				w.Header().Set("Retry-After", "1")
				refuse(w, http.StatusServiceUnavailable, "server_busy", "too many request bodies in flight; retry shortly")
			}
			return
		}
		defer held.release()

		body, err := readBody(r)
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded):
			refuse(w, http.StatusRequestTimeout, "request_timeout",
				"the request body did not arrive within "+strconv.Itoa(int(b.timeout/time.Millisecond))+" ms")
			return
		case err != nil:
			refuse(w, http.StatusBadRequest, "bad_request", "reading request body: "+err.Error())
			return
		case len(body) > wire.MaxRequestBytes:
			refuse(w, http.StatusRequestEntityTooLarge, "request_too_large", "request body over 1 MiB")
			return
		}
		// The body is in: lift the deadline, or the server's wait for the
		// client going away would trip it while the handler runs; and the
		// connection may serve the next request.
		_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
		w.Header().Del("Connection")
		st.read = true
		held.shrink(int64(cap(body)))
		r.Body = &bufferedBody{Reader: bytes.NewReader(body), data: body}
		next.ServeHTTP(w, r)
	})
}

// bufferedBody is a request body BodyLimiter.Buffer read whole, which
// handlers after it may look into without reading it (Buffered).
type bufferedBody struct {
	*bytes.Reader
	data []byte
}

func (*bufferedBody) Close() error { return nil }

// Buffered is r's body when Buffer read it whole, without reading it.
func Buffered(r *http.Request) ([]byte, bool) {
	b, ok := r.Body.(*bufferedBody)
	if !ok {
		return nil, false
	}
	return b.data, true
}

// readBody reads the whole body, at most wire.MaxRequestBytes+1 bytes of it: one
// allocation of the announced length, or for a body of unknown length a
// growing one.
func readBody(r *http.Request) ([]byte, error) {
	if r.ContentLength > 0 {
		body := make([]byte, r.ContentLength)
		_, err := io.ReadFull(r.Body, body)
		return body, err
	}
	return io.ReadAll(io.LimitReader(r.Body, wire.MaxRequestBytes+1))
}

// refuse answers a request whose body stays unread, and closes the
// connection after the answer.
func refuse(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Connection", "close")
	httpapi.Error(w, status, code, msg)
}
