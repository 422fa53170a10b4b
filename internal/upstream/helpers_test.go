package upstream_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/testfixture"
	"github.com/pml-go/pml/internal/upstream"
)

// starts records OnStart calls.
type starts struct {
	mu    sync.Mutex
	calls []bool // the restart flag of each start
}

func (s *starts) record(_ string, restart bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, restart)
}

func (s *starts) get() []bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]bool(nil), s.calls...)
}

// newPool returns a pool with test-friendly timings, closed at test end.
func newPool(t *testing.T, opts upstream.Options) (*upstream.Pool, *starts) {
	t.Helper()
	st := &starts{}
	if opts.StopGrace == 0 {
		opts.StopGrace = 300 * time.Millisecond
	}
	if opts.StartTimeout == 0 {
		opts.StartTimeout = 10 * time.Second
	}
	opts.OnStart = st.record
	p := upstream.NewPool(opts)
	t.Cleanup(func() { _ = p.Close() })
	return p, st
}

func fixture(t *testing.T, name string, args ...string) upstream.ServerConfig {
	return upstream.ServerConfig{Name: name, Command: testfixture.BuildServer(t), Args: args}
}

func ctxTimeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func call(t *testing.T, s *upstream.Server, tool, args string) json.RawMessage {
	t.Helper()
	out, err := s.Call(ctxTimeout(t, 20*time.Second), tool, json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s(%s): %v", tool, args, err)
	}
	return out
}

func pidOf(t *testing.T, s *upstream.Server) int {
	t.Helper()
	out := call(t, s, "pid", `{}`)
	pid, err := strconv.Atoi(string(out))
	if err != nil {
		t.Fatalf("pid returned %s", out)
	}
	return pid
}

func wantCode(t *testing.T, err error, code pmlerr.Code) *pmlerr.Error {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %s", code)
	}
	pe, ok := pmlerr.As(err)
	if !ok || pe.Code != code {
		t.Fatalf("got error %v (%T), want code %s", err, err, code)
	}
	return pe
}

// alive reports whether pid is a live process; a zombie waiting for a
// reaper (PID 1 in a container may never reap) counts as dead.
func alive(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if errors.Is(err, os.ErrNotExist) {
		return false
	}
	// The state follows the parenthesised command name.
	i := strings.LastIndexByte(string(data), ')')
	return err != nil || i < 0 || !strings.HasPrefix(string(data[i+1:]), " Z")
}

func eventually(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %s: %s", within, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// logRecorder is a slog handler that keeps every record.
type logRecorder struct {
	mu      sync.Mutex
	records []map[string]string
}

func (r *logRecorder) Enabled(context.Context, slog.Level) bool { return true }

func (r *logRecorder) Handle(_ context.Context, rec slog.Record) error {
	m := map[string]string{"msg": rec.Message, "level": rec.Level.String()}
	rec.Attrs(func(a slog.Attr) bool {
		m[a.Key] = a.Value.String()
		return true
	})
	r.mu.Lock()
	defer r.mu.Unlock()
	r.records = append(r.records, m)
	return nil
}

func (r *logRecorder) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &boundHandler{r, attrs}
}

func (r *logRecorder) WithGroup(string) slog.Handler { return r }

func (r *logRecorder) find(match func(map[string]string) bool) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, m := range r.records {
		if match(m) {
			return true
		}
	}
	return false
}

// boundHandler is a logRecorder with attributes from Logger.With.
type boundHandler struct {
	r     *logRecorder
	attrs []slog.Attr
}

func (b *boundHandler) Enabled(context.Context, slog.Level) bool { return true }

func (b *boundHandler) Handle(ctx context.Context, rec slog.Record) error {
	rec = rec.Clone()
	rec.AddAttrs(b.attrs...)
	return b.r.Handle(ctx, rec)
}

func (b *boundHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &boundHandler{b.r, append(append([]slog.Attr(nil), b.attrs...), attrs...)}
}

func (b *boundHandler) WithGroup(string) slog.Handler { return b }
