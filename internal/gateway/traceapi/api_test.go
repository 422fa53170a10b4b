package traceapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/gateway/traceapi"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/store/sqlite"
	"github.com/pml-go/pml/internal/tracing"
	"github.com/pml-go/pml/internal/wire"
)

var (
	acme   = store.Scope{Org: "acme", Project: "web"}
	globex = store.Scope{Org: "globex", Project: "web"}
)

// counts is an Observer that keeps what it was told.
type counts struct {
	mu                        sync.Mutex
	localRuns, queue, dropped int64
	pruned                    int
}

func (c *counts) LocalRun(wire.Status, pmlerr.Code, time.Duration) { c.add(&c.localRuns, 1) }
func (c *counts) TraceQueue(depth int)                             { c.mu.Lock(); c.queue = int64(depth); c.mu.Unlock() }
func (c *counts) TracesDropped(n int64)                            { c.add(&c.dropped, n) }
func (c *counts) TracesPruned(n int)                               { c.mu.Lock(); c.pruned += n; c.mu.Unlock() }
func (c *counts) add(p *int64, n int64)                            { c.mu.Lock(); *p += n; c.mu.Unlock() }
func (c *counts) get(p *int64) int64                               { c.mu.Lock(); defer c.mu.Unlock(); return *p }

// newAPI is an API on a fresh SQLite store; the store is returned to be
// closed early by tests of its failures.
func newAPI(t *testing.T) (*traceapi.API, *counts, store.Store) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	obs := &counts{}
	api := traceapi.New(traceapi.Config{
		Store: st, Observer: obs,
		Scope: func(r *http.Request) store.Scope {
			if r.Header.Get("X-Tenant") == "globex" {
				return globex
			}
			return acme
		},
	})
	return api, obs, st
}

func localTrace(id, parent string) tracing.Trace {
	return tracing.Trace{
		TraceID: id, ParentTraceID: parent, WorkflowID: "wf", ExecutedLocally: true, Success: true,
		DurationMS: 3, StartedAt: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC),
		Tasks: []tracing.Task{{TaskID: "t1", Tool: "fs:read", Args: json.RawMessage(`{}`), Success: true}},
	}
}

// A re-sent batch, and a trace repeated within one, are stored and counted
// once; the tool id a minimal client left out is filled.
func TestIngestIsIdempotentAndCountsOnce(t *testing.T) {
	api, obs, _ := newAPI(t)
	ctx := context.Background()
	batch := []tracing.Trace{localTrace("a1", ""), localTrace("a2", ""), localTrace("a1", "")}
	res, err := api.Ingest(ctx, acme, "", batch)
	if err != nil || res != (traceapi.IngestResult{Stored: 2, Duplicates: 1}) {
		t.Fatalf("first batch: %+v, %v", res, err)
	}
	res, err = api.Ingest(ctx, acme, "", batch)
	if err != nil || res != (traceapi.IngestResult{Stored: 0, Duplicates: 3}) {
		t.Fatalf("re-sent batch: %+v, %v", res, err)
	}
	if n := obs.get(&obs.localRuns); n != 2 {
		t.Errorf("%d local runs counted, want 2", n)
	}
	page, err := api.List(ctx, acme, traceapi.Query{Tool: "fs:read"})
	if err != nil || page.Total != 2 || page.Limit != traceapi.DefaultPageSize || page.Page != 1 {
		t.Fatalf("list: %+v, %v", page, err)
	}
	// Another tenant may store the same ids: idempotence is per tenant.
	if res, err := api.Ingest(ctx, globex, "", batch[:1]); err != nil || res.Stored != 1 {
		t.Fatalf("other tenant: %+v, %v", res, err)
	}
}

// One malformed trace refuses the whole batch with INVALID_REQUEST naming
// it; nothing of the batch is stored and the next batch is.
func TestIngestRefusesTheWholeBatch(t *testing.T) {
	api, _, _ := newAPI(t)
	ctx := context.Background()
	bad := localTrace("bad id!", "")
	_, err := api.Ingest(ctx, acme, "", []tracing.Trace{localTrace("ok1", ""), bad})
	if pmlerr.CodeOf(err, "") != pmlerr.InvalidRequest || !strings.Contains(err.Error(), `trace 1 ("bad id!")`) {
		t.Fatalf("err = %v", err)
	}
	if _, err := api.Ingest(ctx, acme, "", make([]tracing.Trace, traceapi.MaxTracesPerRequest+1)); pmlerr.CodeOf(err, "") != pmlerr.InvalidRequest {
		t.Fatalf("oversized batch: %v", err)
	}
	if page, _ := api.List(ctx, acme, traceapi.Query{}); page.Total != 0 {
		t.Fatalf("%d traces stored from refused batches", page.Total)
	}
	if res, err := api.Ingest(ctx, acme, "", []tracing.Trace{localTrace("ok1", "")}); err != nil || res.Stored != 1 {
		t.Fatalf("next batch: %+v, %v", res, err)
	}
}

// A cyclic parent chain ends: each trace appears once in the tree. Another
// tenant's trace is not found, exactly like a missing one.
func TestTreeOfACycleEnds(t *testing.T) {
	api, _, _ := newAPI(t)
	ctx := context.Background()
	if _, err := api.Ingest(ctx, acme, "", []tracing.Trace{localTrace("a", "b"), localTrace("b", "a"), localTrace("c", "a")}); err != nil {
		t.Fatal(err)
	}
	node, err := api.Tree(ctx, acme, "a")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	var walk func(n traceapi.Node)
	walk = func(n traceapi.Node) {
		var tr tracing.Trace
		if err := json.Unmarshal(n.Trace, &tr); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, tr.TraceID)
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(node)
	if got := strings.Join(ids, ","); got != "a,b,c" && got != "a,c,b" {
		t.Errorf("tree holds %s, want a, b and c once each", got)
	}
	for _, sc := range []store.Scope{globex} {
		if _, err := api.Tree(ctx, sc, "a"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("another tenant's trace: %v", err)
		}
	}
	if _, err := api.Tree(ctx, acme, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("missing trace: %v", err)
	}
}

// A run's trace the store cannot take is counted as dropped and the run
// still gets its id; ingest answers an error the handler turns into 503.
func TestStoreFailureIsCounted(t *testing.T) {
	api, obs, st := newAPI(t)
	ctx := context.Background()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if id := api.Keep(ctx, acme, localTrace("k1", "")); id != "k1" {
		t.Errorf("Keep = %q", id)
	}
	if n := obs.get(&obs.dropped); n != 1 {
		t.Errorf("%d traces counted dropped, want 1", n)
	}
	rec := httptest.NewRecorder()
	body := `{"traces":[{"trace_id":"k2","started_at":"2025-03-01T12:00:00Z"}]}`
	api.ServePost(rec, httptest.NewRequest(http.MethodPost, "/api/traces", strings.NewReader(body)))
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), `"store_unavailable"`) {
		t.Errorf("POST on a closed store: %d %s", rec.Code, rec.Body)
	}
}

// The handlers read the tenant from Scope, refuse bad parameters naming
// them, report the package's backlog, and serve the next request.
func TestHandlers(t *testing.T) {
	api, obs, _ := newAPI(t)
	do := func(method, target, tenant, body string, hdr ...string) (int, string) {
		r := httptest.NewRequest(method, target, strings.NewReader(body))
		r.SetPathValue("id", strings.TrimPrefix(target, "/api/traces/"))
		r.Header.Set("X-Tenant", tenant)
		for i := 0; i+1 < len(hdr); i += 2 {
			r.Header.Set(hdr[i], hdr[i+1])
		}
		rec := httptest.NewRecorder()
		switch {
		case method == http.MethodPost:
			api.ServePost(rec, r)
		case strings.HasPrefix(target, "/api/traces/"):
			api.ServeTree(rec, r)
		default:
			api.ServeList(rec, r)
		}
		return rec.Code, rec.Body.String()
	}
	for _, tc := range []struct{ body, want string }{
		{`not json`, `"invalid_traces"`},
		{`{}`, `no traces field`},
		{`{"traces":[{"trace_id":"x"}]}`, `started_at is required`},
	} {
		if code, got := do(http.MethodPost, "/api/traces", "acme", tc.body); code != http.StatusBadRequest || !strings.Contains(got, tc.want) {
			t.Errorf("POST %s: %d %s", tc.body, code, got)
		}
	}
	tr, _ := json.Marshal(map[string]any{"traces": []tracing.Trace{localTrace("h1", "")}})
	if code, got := do(http.MethodPost, "/api/traces", "acme", string(tr), wire.TraceQueueHeader, "7", wire.TracesDroppedHeader, "2"); code != http.StatusOK || !strings.Contains(got, `"stored":1`) {
		t.Fatalf("POST: %d %s", code, got)
	}
	if q, d := obs.get(&obs.queue), obs.get(&obs.dropped); q != 7 || d != 2 {
		t.Errorf("queue %d, dropped %d; want 7 and 2", q, d)
	}
	for _, q := range []string{"since=yesterday", "until=1.5", "success=maybe", "top_level=yes", "page=0", fmt.Sprintf("limit=%d", traceapi.MaxPageSize+1)} {
		name := strings.SplitN(q, "=", 2)[0]
		if code, got := do(http.MethodGet, "/api/traces?"+q, "acme", ""); code != http.StatusBadRequest || !strings.Contains(got, name+"=") {
			t.Errorf("GET ?%s: %d %s", q, code, got)
		}
	}
	if code, got := do(http.MethodGet, "/api/traces?since=1740830400000&success=true", "acme", ""); code != http.StatusOK || !strings.Contains(got, `"total":1`) {
		t.Errorf("GET: %d %s", code, got)
	}
	if code, got := do(http.MethodGet, "/api/traces", "globex", ""); code != http.StatusOK || !strings.Contains(got, `"total":0`) {
		t.Errorf("GET as another tenant: %d %s", code, got)
	}
	if code, _ := do(http.MethodGet, "/api/traces/h1", "globex", ""); code != http.StatusNotFound {
		t.Errorf("GET another tenant's trace: %d", code)
	}
	if code, got := do(http.MethodGet, "/api/traces/h1", "acme", ""); code != http.StatusOK || !strings.Contains(got, `"trace_id":"h1"`) {
		t.Errorf("GET own trace: %d %s", code, got)
	}
}

// A top-level list holds the executions only, each with the capability
// runs it started nested under it, theirs under them (issue 33, section 3,
// item 1); a cyclic chain does not loop.
func TestTopLevelListNestsChildren(t *testing.T) {
	api, _, _ := newAPI(t)
	ctx := context.Background()
	traces := []tracing.Trace{localTrace("a", ""), localTrace("b", "a"), localTrace("c", "b"), localTrace("d", ""), localTrace("x", "y"), localTrace("y", "x")}
	if _, err := api.Ingest(ctx, acme, "", traces); err != nil {
		t.Fatal(err)
	}
	page, err := api.List(ctx, acme, traceapi.Query{TopLevel: true})
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	var walk func(s traceapi.Summary, pad string)
	walk = func(s traceapi.Summary, pad string) {
		lines = append(lines, pad+s.TraceID)
		for _, c := range s.Children {
			walk(c, pad+" ")
		}
	}
	for _, s := range page.Traces {
		walk(s, "")
	}
	if got := strings.Join(lines, ","); page.Total != 2 || (got != "a, b,  c,d" && got != "d,a, b,  c") {
		t.Errorf("top-level list %q (total %d), want a with b with c, and d", got, page.Total)
	}
	if all, _ := api.List(ctx, acme, traceapi.Query{}); all.Total != len(traces) || len(all.Traces[0].Children) != 0 {
		t.Errorf("the plain list: total %d, children %v", all.Total, all.Traces[0].Children)
	}
}

func TestRetentionValidate(t *testing.T) {
	for _, p := range []traceapi.Retention{{MaxAge: -time.Second}, {MaxCount: -1}, {Interval: -time.Minute}} {
		if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "none may be negative") {
			t.Errorf("%+v: %v", p, err)
		}
	}
	if err := traceapi.DefaultRetention().Validate(); err != nil {
		t.Error(err)
	}
}

// Runs of two tenants that end together share group commits: each tenant
// still sees its own traces only, each counted once in its own dashboard,
// and a trace that cannot be stored (arguments that are not JSON) is the
// only one dropped. (TestGroupCommit retries a group the store refuses.)
func TestKeepGroupsKeepTenantsApart(t *testing.T) {
	api, obs, st := newAPI(t)
	ctx := context.Background()
	const each = 40
	var wg sync.WaitGroup
	for i := range each {
		for _, sc := range []store.Scope{acme, globex} {
			wg.Go(func() {
				tr := localTrace(fmt.Sprintf("%s-%d", sc.Org, i), "")
				tr.StartedAt = time.Now().UTC()
				api.Keep(ctx, sc, tr)
			})
		}
	}
	wg.Go(func() {
		bad := localTrace("bad", "")
		bad.Tasks[0].Args = json.RawMessage(`{not json`)
		api.Keep(ctx, acme, bad)
	})
	wg.Wait()
	for _, sc := range []store.Scope{acme, globex} {
		page, err := api.List(ctx, sc, traceapi.Query{Limit: 100})
		if err != nil || page.Total != each {
			t.Fatalf("%s: %d traces, %v", sc.Org, page.Total, err)
		}
		for _, s := range page.Traces {
			if !strings.HasPrefix(s.TraceID, sc.Org+"-") {
				t.Fatalf("%s lists %s", sc.Org, s.TraceID)
			}
		}
		d, err := st.Dashboard(ctx, sc, time.Now().Add(-time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		n := int64(0)
		for _, m := range d.Minutes {
			n += m.Executions
		}
		if n != each {
			t.Fatalf("%s dashboard counts %d executions, want %d", sc.Org, n, each)
		}
	}
	if got := obs.get(&obs.dropped); got != 1 {
		t.Fatalf("%d traces dropped, want the bad one", got)
	}
}

// Ingest sanitizes what a package posts; IngestSanitized, for the traces
// the package of the same process sanitized itself (local mode), checks and
// stores them as they are.
func TestIngestSanitizedSkipsOnlyTheSecondPass(t *testing.T) {
	api, _, st := newAPI(t)
	ctx := context.Background()
	posted := localTrace("posted", "")
	posted.Tasks[0].Args = json.RawMessage(`{"mail":"bob@example.com"}`)
	own := posted
	own.TraceID = "own"
	if _, err := api.Ingest(ctx, acme, "", []tracing.Trace{posted}); err != nil {
		t.Fatal(err)
	}
	if res, err := api.IngestSanitized(ctx, acme, "", []tracing.Trace{own, own}); err != nil || res != (traceapi.IngestResult{Stored: 1, Duplicates: 1}) {
		t.Fatalf("IngestSanitized: %+v, %v", res, err)
	}
	for id, want := range map[string]string{"posted": "[EMAIL]", "own": "bob@example.com"} {
		tr, err := st.TraceByID(ctx, acme, id)
		if err != nil || !strings.Contains(string(tr.Body), want) {
			t.Errorf("trace %s stored as %s (%v), want %q in it", id, tr.Body, err, want)
		}
	}
	bad := localTrace("bad id!", "")
	if _, err := api.IngestSanitized(ctx, acme, "", []tracing.Trace{bad}); pmlerr.CodeOf(err, "") != pmlerr.InvalidRequest {
		t.Errorf("IngestSanitized took a malformed trace: %v", err)
	}
}

// The same batch sent eight times at once (a package retrying while its
// first POST is still in flight) is stored once and counted once: the
// store tells the new traces apart in the transaction that stores them,
// so no two senders both find a trace missing and both count it.
func TestConcurrentResendsCountOnce(t *testing.T) {
	api, obs, _ := newAPI(t)
	batch := []tracing.Trace{localTrace("c1", ""), localTrace("c2", ""), localTrace("c3", ""), localTrace("c4", ""), localTrace("c5", "")}
	var mu sync.Mutex
	var total traceapi.IngestResult
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			res, err := api.Ingest(context.Background(), acme, "", batch)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			total.Stored += res.Stored
			total.Duplicates += res.Duplicates
			mu.Unlock()
		})
	}
	wg.Wait()
	if total != (traceapi.IngestResult{Stored: 5, Duplicates: 35}) {
		t.Fatalf("over eight sends: %+v, want 5 stored and 35 duplicates", total)
	}
	if n := obs.get(&obs.localRuns); n != 5 {
		t.Fatalf("%d executions counted, want 5", n)
	}
	// The next batch is served.
	if res, err := api.Ingest(context.Background(), acme, "", []tracing.Trace{localTrace("c6", "")}); err != nil || res.Stored != 1 {
		t.Fatalf("next batch: %+v, %v", res, err)
	}
}
