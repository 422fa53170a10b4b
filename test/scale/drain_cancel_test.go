package scale_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/store/pgtest"
	"github.com/pml-go/pml/internal/store/postgres"
	"github.com/pml-go/pml/internal/wire"
)

// oldProtocolExecute sends execute as a plain MCP client of version (no
// 2026-07-28 header: what remote MCP clients speak) and reads its answer.
func oldProtocolExecute(ctx context.Context, url, key, version, code string) (wire.Answer, error) {
	args, err := json.Marshal(wire.ExecuteRequest{Code: code})
	if err != nil {
		return wire.Answer{}, err
	}
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"execute","arguments":%s}}`, args)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/mcp", strings.NewReader(body))
	if err != nil {
		return wire.Answer{}, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if version != "" {
		req.Header.Set("Mcp-Protocol-Version", version)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return wire.Answer{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return wire.Answer{}, err
	}
	a, err := gatewaytest.AnswerOf(resp.Header.Get("Content-Type"), raw)
	if err != nil {
		return wire.Answer{}, fmt.Errorf("HTTP %d: %w", resp.StatusCode, err)
	}
	return a, nil
}

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
		a, err := oldProtocolExecute(context.Background(), r.url, key, "2025-06-18", `for (;;) {}`)
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
