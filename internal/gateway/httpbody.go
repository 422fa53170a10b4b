package gateway

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"strconv"
	"time"

	"golang.org/x/sync/semaphore"
)

// MaxRequestBytes bounds every request body; larger ones get 413.
const MaxRequestBytes = 1 << 20

// bodyLimiter bounds request bodies: how long one may take to arrive
// (a read deadline on the connection), how large it may be, and how many
// bytes of bodies are held in memory at once over all requests.
type bodyLimiter struct {
	timeout time.Duration
	budget  *semaphore.Weighted
}

func newBodyLimiter(lim HTTPLimits) *bodyLimiter {
	lim = lim.withDefaults()
	return &bodyLimiter{timeout: lim.BodyTimeout, budget: semaphore.NewWeighted(lim.MaxBufferedBytes)}
}

// LimitBodies bounds the bodies of h's requests within lim (see
// HTTPLimits): a handler behind it reads a body already in memory.
func LimitBodies(h http.Handler, lim HTTPLimits) http.Handler {
	b := newBodyLimiter(lim)
	return b.deadline(b.buffer(h))
}

type bodyDeadlineKey struct{}

// deadline sets the connection's read deadline for a request with a body,
// before anything else runs: whoever reads the body, or the server
// discarding one nobody read, cannot wait on it longer. Requests without a
// body keep no deadline, so a long-lived event stream is never cut.
func (b *bodyLimiter) deadline(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hasBody(r) {
			d := time.Now().Add(b.timeout)
			_ = http.NewResponseController(w).SetReadDeadline(d) // unsupported only off a real connection
			r = r.WithContext(context.WithValue(r.Context(), bodyDeadlineKey{}, d))
		}
		next.ServeHTTP(w, r)
	})
}

func hasBody(r *http.Request) bool {
	return r.ContentLength != 0 && r.Body != nil && r.Body != http.NoBody
}

// buffer reads the body into memory within the byte budget and hands next a
// request whose body is that buffer. It runs after authentication, so a
// request without a valid key never has its body read. Bodies are small by
// contract, so buffering is cheap and gives a clean 413 even for chunked
// uploads. A request it refuses gets Connection: close, since its unread
// body still sits on the connection.
func (b *bodyLimiter) buffer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hasBody(r) {
			next.ServeHTTP(w, r)
			return
		}
		if r.ContentLength > MaxRequestBytes {
			refuse(w, http.StatusRequestEntityTooLarge, "request_too_large", "request body over 1 MiB")
			return
		}
		deadline, ok := r.Context().Value(bodyDeadlineKey{}).(time.Time)
		if !ok {
			deadline = time.Now().Add(b.timeout)
		}
		// A body of unknown length (chunked) reserves the largest size and
		// gives back what it did not use.
		reserved := r.ContentLength
		if reserved < 0 {
			reserved = MaxRequestBytes + 1
		}
		wait, cancel := context.WithDeadline(r.Context(), deadline)
		err := b.budget.Acquire(wait, reserved)
		cancel()
		if err != nil {
			if r.Context().Err() == nil {
				w.Header().Set("Retry-After", "1")
				refuse(w, http.StatusServiceUnavailable, "server_busy", "too many request bodies in flight; retry shortly")
			}
			return
		}
		defer func() { b.budget.Release(reserved) }()

		var buf bytes.Buffer
		if r.ContentLength > 0 {
			buf.Grow(int(r.ContentLength))
		}
		_, err = buf.ReadFrom(io.LimitReader(r.Body, MaxRequestBytes+1))
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded):
			refuse(w, http.StatusRequestTimeout, "request_timeout",
				"the request body did not arrive within "+strconv.Itoa(int(b.timeout/time.Millisecond))+" ms")
			return
		case err != nil:
			refuse(w, http.StatusBadRequest, "bad_request", "reading request body: "+err.Error())
			return
		case buf.Len() > MaxRequestBytes:
			refuse(w, http.StatusRequestEntityTooLarge, "request_too_large", "request body over 1 MiB")
			return
		}
		// The body is in: lift the deadline, or the server's wait for the
		// client going away would trip it while the handler runs.
		_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
		if unused := reserved - int64(buf.Len()); unused > 0 {
			b.budget.Release(unused)
			reserved -= unused
		}
		r.Body = io.NopCloser(bytes.NewReader(buf.Bytes()))
		next.ServeHTTP(w, r)
	})
}

// refuse answers a request whose body stays unread, and closes the
// connection after the answer.
func refuse(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Connection", "close")
	writeJSONError(w, status, code, msg)
}
