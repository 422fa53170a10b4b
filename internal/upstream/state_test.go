package upstream_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/upstream"
)

// A server's state follows its life: idle until used, ready with a live
// session, failed with the start's error when it cannot start, and stopped
// once removed; a failed server does not stop the others from serving.
func TestServerStatus(t *testing.T) {
	p, _ := newPool(t, upstream.Options{})
	good := p.Add(fixture(t, "fx"))
	bad := p.Add(upstream.ServerConfig{Name: "bad", Command: "pml-no-such-command"})

	want := map[string]upstream.Status{"fx": {State: upstream.StateIdle}, "bad": {State: upstream.StateIdle}}
	if got := p.Statuses(); len(got) != 2 || got["fx"] != want["fx"] || got["bad"] != want["bad"] {
		t.Fatalf("before any use: %+v", got)
	}

	if _, err := bad.Tools(ctxTimeout(t, 20*time.Second)); err == nil {
		t.Fatal("a missing command started")
	}
	st := bad.Status()
	if st.State != upstream.StateFailed || !strings.Contains(st.Error, "pml-no-such-command") {
		t.Fatalf("after a failed start: %+v", st)
	}
	// The backoff refusal does not hide the reason either.
	if _, err := bad.Tools(context.Background()); err == nil {
		t.Fatal("a missing command started on retry")
	}
	if st := bad.Status(); st.State != upstream.StateFailed || !strings.Contains(st.Error, "pml-no-such-command") {
		t.Fatalf("after a refused retry: %+v", st)
	}

	call(t, good, "echo", `{"text":"hi"}`)
	if st := good.Status(); st != (upstream.Status{State: upstream.StateReady}) {
		t.Fatalf("after a call: %+v", st)
	}
	if got := p.Statuses()["bad"]; got.State != upstream.StateFailed {
		t.Fatalf("pool status of bad: %+v", got)
	}

	p.Remove("fx")
	if st := good.Status(); st.State != upstream.StateStopped {
		t.Fatalf("after Remove: %+v", st)
	}
	if _, ok := p.Statuses()["fx"]; ok {
		t.Fatal("a removed server is still listed")
	}
}
