//go:build linux

package scale_test

import (
	"context"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/store/pgtest"
	"github.com/pml-go/pml/internal/store/postgres"
	"github.com/pml-go/pml/internal/wire"
)

// Issue 29's reproduction: a plain MCP client (2025-06-18) runs
// `for (;;) {}` and `pml gateway` gets SIGTERM with --shutdown-grace 1s.
// At the end of the grace the run is answered CANCELLED, its trace is
// stored, and the process exits 0 (before, nothing was cancelled, the
// connection was closed 5 s later without an answer, and no trace kept).
func TestSIGTERMAnswersOldProtocolRuns(t *testing.T) {
	dsn := pgtest.Start(t)
	r := startReplica(t, "r", dsn, "--shutdown-grace", "1s")
	key := createKey(t, dsn)
	type result struct {
		a   wire.Answer
		err error
	}
	done := make(chan result, 1)
	go func() {
		a, err := gatewaytest.RawExecute(context.Background(), r.url, key, "2025-06-18", `for (;;) {}`)
		done <- result{a, err}
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		n, err := r.metric(t.Context(), "pml_executions_running")
		if err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run never started:\n%s", r.log)
		}
		time.Sleep(10 * time.Millisecond)
	}
	terminate(t, r) // exit 0 within 30 s, or the test fails
	res := <-done
	if res.err != nil {
		t.Fatalf("no answer: %v\n%s", res.err, r.log)
	}
	if res.a.Status != wire.StatusError || res.a.ErrorCode != "CANCELLED" || res.a.TraceID == "" {
		t.Fatalf("answer %+v; want CANCELLED with a trace", res.a)
	}
	st, err := postgres.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.TraceByID(t.Context(), tenant, res.a.TraceID); err != nil {
		t.Fatalf("its trace: %v", err)
	}
}
