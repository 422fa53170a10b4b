package gateway_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/gateway/gatewaytest"
)

// syncWriter is a log sink safe for the server's goroutines.
type syncWriter struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// Every request gets one JSON access line in the gateway's one log format:
// method, path, status, duration and tenant; never the key, the query or
// the body; refused requests too, and the next request is served.
func TestAccessLogOneLinePerRequest(t *testing.T) {
	sink := &syncWriter{}
	g := gatewaytest.Start(t, gateway.Options{Logger: slog.New(slog.NewJSONHandler(sink, nil))})
	do := func(method, path, key, body string) int {
		t.Helper()
		req, err := http.NewRequest(method, g.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	steps := []struct {
		method, path, key, body string
		status                  int
		tenant                  string
	}{
		{"GET", "/healthz", "", "", 200, ""},
		{"GET", "/api/traces", "", "", 401, ""},
		{"GET", "/api/traces", "pml_not-a-key", "", 401, ""},
		{"GET", "/api/traces?limit=0&workflow_id=secretquery", g.Key, "", 400, "acme/web"},
		{"POST", "/api/traces", g.Key, `{"traces": "secretbody"}`, 400, "acme/web"},
		{"GET", "/api/traces/0123456789abcdef0123456789abcdef", g.Key, "", 404, "acme/web"},
		{"GET", "/api/traces", g.Key, "", 200, "acme/web"},
	}
	for _, s := range steps {
		if got := do(s.method, s.path, s.key, s.body); got != s.status {
			t.Fatalf("%s %s: HTTP %d, want %d", s.method, s.path, got, s.status)
		}
	}
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(sink.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("a log line in another format: %q", l)
		}
		if m["msg"] == "request" {
			lines = append(lines, m)
		}
	}
	if len(lines) != len(steps) {
		t.Fatalf("%d access lines for %d requests:\n%s", len(lines), len(steps), sink)
	}
	for i, s := range steps {
		m := lines[i]
		path, _, _ := strings.Cut(s.path, "?")
		if m["method"] != s.method || m["path"] != path || m["status"] != float64(s.status) || m["tenant"] != s.tenant {
			t.Errorf("line %d: %v, want %s %s %d tenant %q", i, m, s.method, path, s.status, s.tenant)
		}
		if d, ok := m["duration_ms"].(float64); !ok || d < 0 {
			t.Errorf("line %d: duration_ms %v", i, m["duration_ms"])
		}
	}
	for _, secret := range []string{g.Key, "pml_not-a-key", "secretquery", "secretbody"} {
		if strings.Contains(sink.String(), secret) {
			t.Errorf("the log holds %q", secret)
		}
	}
}

// A path of 100 KB, which anyone can send before presenting a key, leaves
// an access line of bounded size, and the next request is served.
func TestAccessLogBoundsThePath(t *testing.T) {
	sink := &syncWriter{}
	g := gatewaytest.Start(t, gateway.Options{Logger: slog.New(slog.NewJSONHandler(sink, nil))})
	resp, err := http.Get(g.URL + "/" + strings.Repeat("p", 100<<10))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp, err := http.Get(g.URL + "/healthz"); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the next request: %v", err)
	}
	for _, l := range strings.Split(strings.TrimSpace(sink.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		if p, _ := m["path"].(string); len(p) > 512 {
			t.Errorf("an access line with a %d-byte path", len(p))
		}
	}
}
