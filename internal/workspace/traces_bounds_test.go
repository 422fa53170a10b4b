package workspace

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/gatewayclient"
	"github.com/pml-go/pml/internal/store/storeopen"
	"github.com/pml-go/pml/internal/tracing"
	"github.com/pml-go/pml/internal/wire"
)

// fileSizes is the bytes of the SQLite database and its WAL.
func fileSizes(t *testing.T, db string) int64 {
	t.Helper()
	var n int64
	for _, p := range []string{db, db + "-wal"} {
		if st, err := os.Stat(p); err == nil {
			n += st.Size()
		}
	}
	return n
}

// checkBoundedTrace checks a stored loop trace: the kept calls within the
// span cap, the others aggregated, the JSON within the byte cap.
func checkBoundedTrace(t *testing.T, body []byte, tool string) tracing.Trace {
	t.Helper()
	if len(body) > tracing.MaxTraceBytes {
		t.Errorf("stored trace is %d bytes, cap %d", len(body), tracing.MaxTraceBytes)
	}
	var tr tracing.Trace
	if err := json.Unmarshal(body, &tr); err != nil {
		t.Fatal(err)
	}
	kept := tracing.DefaultHeadSpans + tracing.DefaultTailSpans
	tc := tr.Truncated
	if len(tr.Tasks) > kept {
		t.Fatalf("%d tasks kept, cap %d", len(tr.Tasks), kept)
	}
	if tc == nil {
		// Only a machine too slow to make more calls than the cap before
		// the deadline (the race detector) gets here.
		t.Logf("the loop made only %d calls: nothing to aggregate", len(tr.Tasks))
		return tr
	}
	if len(tr.Tasks) != kept || len(tc.Aggregates) != 1 || tc.Aggregates[0].Tool != tool ||
		tc.Aggregates[0].Calls != tc.SpansAggregated || tc.Spans != len(tr.Tasks)+tc.SpansAggregated {
		t.Errorf("%d tasks, aggregate %+v of %d spans", len(tr.Tasks), tc.Aggregates, tc.Spans)
	}
	return tr
}

// The user's local-mode loop (pml exec with no cloud URL: the in-process
// gateway runs it) until its deadline: the answer comes right after the
// deadline, and the database grows by one bounded trace. Before the bounds,
// a 30 s loop wrote a 139 MB trace and answered after ~50 s; the growth no
// longer depends on how long the loop ran, so a 3 s loop checks the bound
// a 30 s one must meet (10 MB).
func TestLocalModeLoopUntilDeadline(t *testing.T) {
	t.Setenv("PML_CLOUD_URL", "")
	ws := trWorkspace(t, map[string]string{})
	p, err := Open(context.Background(), ws, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p.gw.(*gatewayclient.InProcess); !ok {
		t.Fatalf("not local mode: %T", p.gw)
	}
	db := filepath.Join(ws, StateDir, "gateway.db")
	before := fileSizes(t, db)
	const deadline = 3 * time.Second
	start := time.Now()
	a := p.Execute(context.Background(), wire.ExecuteRequest{
		Code:    `while (true) { await mcp.math.add({ a: 1, b: 2 }); }`,
		Options: &wire.ExecuteOptions{TimeoutMS: int(deadline.Milliseconds())},
	})
	took := time.Since(start)
	if a.Status != wire.StatusError || a.ErrorCode != "EXECUTION_TIMEOUT" || a.TraceID == "" {
		t.Fatalf("%+v", a)
	}
	// Within 1 s of the deadline, with slack for a loaded machine.
	if took > deadline+2*time.Second {
		t.Errorf("answered %v after the start, deadline %v", took, deadline)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	grown := fileSizes(t, db) - before

	st, err := storeopen.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	row, err := st.TraceByID(context.Background(), gateway.LocalScope, a.TraceID)
	if err != nil {
		t.Fatal(err)
	}
	tr := checkBoundedTrace(t, row.Body, "math:add")
	if grown > 2<<20 {
		t.Errorf("the database grew by %d bytes for one bounded trace of %d bytes", grown, len(row.Body))
	}
	calls := len(tr.Tasks)
	if tr.Truncated != nil {
		calls = tr.Truncated.Spans
	}
	t.Logf("answered %v after the start (deadline %v); %d calls, %d kept; trace %d bytes; database grew %d bytes",
		took, deadline, calls, len(tr.Tasks), len(row.Body), grown)
}

// A hybrid run's loop of client calls until its deadline: the package's
// trace reaches the gateway bounded (before, the upload was refused with
// 413 and the trace dropped).
func TestHybridLoopTraceDelivered(t *testing.T) {
	g := trStartGateway(t)
	ws := trWorkspace(t, map[string]string{"a.txt": "x"})
	p := trOpen(t, ws, g, trFastSync)
	a := p.Execute(context.Background(), wire.ExecuteRequest{
		Code:    `while (true) { await mcp.filesystem.read_file({ path: "a.txt" }); }`,
		Options: &wire.ExecuteOptions{TimeoutMS: 3000},
	})
	if a.Status != wire.StatusError || a.ErrorCode != "EXECUTION_TIMEOUT" || a.TraceID == "" {
		t.Fatalf("%+v", a)
	}
	if err := p.Close(); err != nil { // flushes the queue
		t.Fatal(err)
	}
	if st := p.TraceStats(); st.Dropped != 0 || st.Depth != 0 {
		t.Fatalf("queue after close: %+v", st)
	}
	row, err := g.service().Store().TraceByID(context.Background(), trScope, a.TraceID)
	if err != nil {
		t.Fatalf("the run's trace was not delivered: %v", err)
	}
	tr := checkBoundedTrace(t, row.Body, "filesystem:read_file")
	if !tr.ExecutedLocally || tr.ErrorCode != "EXECUTION_TIMEOUT" {
		t.Errorf("trace %+v", tr.ErrorCode)
	}
}
