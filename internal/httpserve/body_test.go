package httpserve

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/gateway/httpapi"
	"github.com/pml-go/pml/internal/wire"
)

// bodyServer is a BodyLimiter in front of a handler that echoes the body's
// size and, while told to, holds its request (and so the body's bytes).
type bodyServer struct {
	b       *BodyLimiter
	h       http.Handler
	entered chan struct{}
	hold    chan struct{}
}

func newBodyServer(lim Limits) *bodyServer {
	s := &bodyServer{entered: make(chan struct{}, 16), hold: make(chan struct{})}
	close(s.hold)
	b := NewBodyLimiter(lim)
	s.b = b
	s.h = b.Deadline(b.Buffer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		s.entered <- struct{}{}
		<-s.hold
		httpapi.Write(w, http.StatusOK, map[string]int64{"bytes": n})
	}), func(r *http.Request) (any, bool) {
		t, ok := r.Context().Value(tenantKey{}).(string)
		return t, ok
	}))
	return s
}

// tenantKey carries the test's tenant, as the gateway's key check would.
type tenantKey struct{}

// send serves one request with a body of n bytes, as tenant when given.
func (s *bodyServer) send(n int, tenant *string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(make([]byte, n)))
	if tenant != nil {
		r = r.WithContext(context.WithValue(r.Context(), tenantKey{}, *tenant))
	}
	w := httptest.NewRecorder()
	s.h.ServeHTTP(w, r)
	return w
}

func errorCode(t *testing.T, w *httptest.ResponseRecorder) string {
	t.Helper()
	var body struct{ Error string }
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
		t.Fatalf("HTTP %d: %v: %s", w.Code, err, w.Body)
	}
	return body.Error
}

// While the budget is held, a request that needs more waits until its body
// timeout and gets 503 server_busy; once it is free, requests pass again.
func TestBodyBudgetBusy(t *testing.T) {
	s := newBodyServer(Limits{BodyTimeout: 200 * time.Millisecond, MaxBufferedBytes: 1}) // raised to one largest body
	s.hold = make(chan struct{})
	first := make(chan *httptest.ResponseRecorder, 1)
	go func() { first <- s.send(wire.MaxRequestBytes, nil) }()
	<-s.entered // the first body is held, and its bytes with it

	busy := s.send(10, nil)
	if busy.Code != http.StatusServiceUnavailable || errorCode(t, busy) != "server_busy" ||
		busy.Header().Get("Retry-After") != "1" || busy.Header().Get("Connection") != "close" {
		t.Fatalf("over the budget: HTTP %d %v %s", busy.Code, busy.Header(), busy.Body)
	}
	close(s.hold)
	if w := <-first; w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"bytes":1048576`) {
		t.Fatalf("the held request: HTTP %d %s", w.Code, w.Body)
	}
	if w := s.send(10, nil); w.Code != http.StatusOK || w.Header().Get("Connection") != "" {
		t.Fatalf("after the budget is free: HTTP %d %v %s", w.Code, w.Header(), w.Body)
	}
	<-s.entered
}

// One tenant holding its share leaves room for the others.
func TestBodyBudgetTenantShare(t *testing.T) {
	acme, globex := "acme/web", "globex/web"
	lim := Limits{BodyTimeout: 200 * time.Millisecond, MaxBufferedBytes: 4 * (wire.MaxRequestBytes + 1)}
	s := newBodyServer(lim)
	s.hold = make(chan struct{})
	first := make(chan *httptest.ResponseRecorder, 1)
	go func() { first <- s.send(wire.MaxRequestBytes, &acme) }()
	<-s.entered

	if w := s.send(10, &acme); w.Code != http.StatusServiceUnavailable || errorCode(t, w) != "server_busy" {
		t.Fatalf("acme over its share: HTTP %d %s", w.Code, w.Body)
	}
	other := make(chan *httptest.ResponseRecorder, 1)
	go func() { other <- s.send(wire.MaxRequestBytes, &globex) }()
	<-s.entered // globex got in while acme holds its whole share
	close(s.hold)
	for _, c := range []chan *httptest.ResponseRecorder{first, other} {
		if w := <-c; w.Code != http.StatusOK {
			t.Fatalf("held request: HTTP %d %s", w.Code, w.Body)
		}
	}
	if n := s.b.budget.tenantCount(); n != 0 {
		t.Fatalf("%d tenant entries left after every request ended", n)
	}
}
