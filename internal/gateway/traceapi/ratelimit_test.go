package traceapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/gateway/traceapi"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/store/sqlite"
	"github.com/pml-go/pml/internal/tracing"
)

// clock is a settable clock for the ingest buckets.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// limitedAPI is an API with ingest limits on a settable clock.
func limitedAPI(t *testing.T, lim traceapi.IngestLimits) (*traceapi.API, *clock) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	c := &clock{now: time.Now()}
	api := traceapi.New(traceapi.Config{
		Store: st, Observer: &counts{}, Now: c.Now, Ingest: lim,
		Scope: func(r *http.Request) store.Scope {
			if r.Header.Get("X-Tenant") == "globex" {
				return globex
			}
			return acme
		},
	})
	return api, c
}

// post sends n fresh traces as tenant and returns the status, the
// Retry-After header and the body.
func post(t *testing.T, api *traceapi.API, c *clock, tenant string, n int, pad int) (int, string, string) {
	t.Helper()
	traces := make([]tracing.Trace, n)
	for i := range traces {
		tr := localTrace(tracing.NewTraceID(), "")
		tr.StartedAt = c.Now()
		tr.Code = strings.Repeat("x", pad)
		traces[i] = tr
	}
	body, err := json.Marshal(map[string]any{"traces": traces})
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodPost, "/api/traces", strings.NewReader(string(body)))
	r.Header.Set("X-Tenant", tenant)
	rec := httptest.NewRecorder()
	api.ServePost(rec, r)
	return rec.Code, rec.Header().Get("Retry-After"), rec.Body.String()
}

// A tenant past its traces per minute gets 429 with Retry-After, stores
// nothing of that request, and is served again once its bucket refilled;
// another tenant is served all along.
func TestIngestLimitTracesPerMinute(t *testing.T) {
	api, c := limitedAPI(t, traceapi.IngestLimits{TracesPerMinute: 150})
	if code, _, body := post(t, api, c, "acme", 100, 0); code != http.StatusOK {
		t.Fatalf("first batch: %d %s", code, body)
	}
	code, retry, body := post(t, api, c, "acme", 100, 0)
	if code != http.StatusTooManyRequests || !strings.Contains(body, `"rate_limited"`) || !strings.Contains(body, "retry_after_ms") {
		t.Fatalf("second batch: %d %s", code, body)
	}
	// 50 traces are missing, earned back in 20 s.
	if s, err := strconv.Atoi(retry); err != nil || s != 20 {
		t.Errorf("Retry-After %q, want 20", retry)
	}
	if page, _ := api.List(context.Background(), acme, traceapi.Query{}); page.Total != 100 {
		t.Errorf("%d traces stored; the refused batch stored some", page.Total)
	}
	if code, _, body := post(t, api, c, "globex", 100, 0); code != http.StatusOK {
		t.Fatalf("another tenant: %d %s", code, body)
	}
	c.add(20 * time.Second)
	if code, _, body := post(t, api, c, "acme", 100, 0); code != http.StatusOK {
		t.Fatalf("after Retry-After: %d %s", code, body)
	}
}

// The bytes per minute hold the same way, and a request larger than a
// whole minute's worth is served once the bucket is full, not never.
func TestIngestLimitBytesPerMinute(t *testing.T) {
	api, c := limitedAPI(t, traceapi.IngestLimits{BytesPerMinute: 64 << 10})
	if code, _, body := post(t, api, c, "acme", 10, 4<<10); code != http.StatusOK {
		t.Fatalf("first batch: %d %s", code, body)
	}
	code, retry, _ := post(t, api, c, "acme", 10, 4<<10)
	if code != http.StatusTooManyRequests || retry == "" {
		t.Fatalf("second batch: %d, Retry-After %q", code, retry)
	}
	c.add(time.Minute)
	if code, _, body := post(t, api, c, "acme", 30, 4<<10); code != http.StatusOK {
		t.Fatalf("a batch over a minute's worth, bucket full: %d %s", code, body)
	}
	if code, _, _ := post(t, api, c, "acme", 1, 0); code != http.StatusTooManyRequests {
		t.Fatalf("right after it: %d", code)
	}
}

func TestIngestLimitsValidate(t *testing.T) {
	for _, l := range []traceapi.IngestLimits{{TracesPerMinute: -1}, {BytesPerMinute: -1}} {
		if err := l.Validate(); err == nil {
			t.Errorf("%+v: no error", l)
		}
	}
	if err := traceapi.DefaultIngestLimits().Validate(); err != nil {
		t.Error(err)
	}
}
