package gateway_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/gateway/traceapi"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/tracing"
)

func TestTracesIngestIsIdempotentAndQueryable(t *testing.T) {
	g := gatewaytest.Start(t, gateway.Options{})
	base := time.Now().UTC().Truncate(time.Second).Add(-2 * time.Hour)
	parent := traceAt(base, 0, "wf-a", true, "filesystem:read_file", "crypto:sha256")
	child := traceAt(base, time.Second, "wf-a", true, "json:parse")
	child.ParentTraceID = parent.TraceID
	child.CapabilityFQDN = "acme.web.text.summarize.ab12"
	parent.Tasks[1].ChildTraceID = child.TraceID
	grandchild := traceAt(base, 2*time.Second, "wf-a", true, "math:add")
	grandchild.ParentTraceID = child.TraceID
	failed := traceAt(base, time.Hour, "wf-b", false, "shell:exec")
	failed.Tasks[0].Success, failed.Tasks[0].Error, failed.Tasks[0].Result = false, "exit 1", nil

	if stored, dups := postTraces(t, g.URL, g.Key, parent, child, grandchild, failed); stored != 4 || dups != 0 {
		t.Fatalf("first post: stored %d duplicates %d", stored, dups)
	}
	// The package re-sends a batch whose answer it lost: nothing doubles.
	if stored, dups := postTraces(t, g.URL, g.Key, parent, failed); stored != 0 || dups != 2 {
		t.Fatalf("re-post: stored %d duplicates %d", stored, dups)
	}
	if l := listTraces(t, g.URL, g.Key, ""); l.Total != 4 || len(l.Traces) != 4 || l.Traces[0].TraceID != failed.TraceID {
		t.Fatalf("list: %+v", l)
	}

	filters := []struct {
		query string
		want  []string
	}{
		{"?workflow_id=wf-b", []string{failed.TraceID}},
		{"?tool=math:add", []string{grandchild.TraceID}},
		{"?success=false", []string{failed.TraceID}},
		{"?capability=acme.web.text.summarize.ab12", []string{child.TraceID}},
		{"?since=" + base.Add(time.Second).Format(time.RFC3339) + "&until=" + base.Add(time.Minute).Format(time.RFC3339),
			[]string{grandchild.TraceID, child.TraceID}},
		{fmt.Sprintf("?until=%d", base.Add(time.Second).UnixMilli()), []string{parent.TraceID}},
		{"?limit=1&page=2", []string{grandchild.TraceID}},
	}
	for _, f := range filters {
		l := listTraces(t, g.URL, g.Key, f.query)
		var got []string
		for _, tr := range l.Traces {
			got = append(got, tr.TraceID)
		}
		if strings.Join(got, ",") != strings.Join(f.want, ",") {
			t.Errorf("%s: got %v, want %v", f.query, got, f.want)
		}
	}
	l := listTraces(t, g.URL, g.Key, "?limit=1&page=2")
	if l.Total != 4 || l.Page != 2 || l.Limit != 1 {
		t.Errorf("pagination fields: %+v", l)
	}
	if l := listTraces(t, g.URL, g.Key, "?success=false"); l.Traces[0].FailedTasks != 1 || l.Traces[0].TaskCount != 1 {
		t.Errorf("summary counts: %+v", l.Traces[0])
	}

	tree := getTree(t, g.URL, g.Key, parent.TraceID)
	if tree.Trace.TraceID != parent.TraceID || len(tree.Trace.Tasks) != 2 || len(tree.Children) != 1 {
		t.Fatalf("tree root: %+v", tree)
	}
	if c := tree.Children[0]; c.Trace.TraceID != child.TraceID || len(c.Children) != 1 || c.Children[0].Trace.TraceID != grandchild.TraceID {
		t.Fatalf("child tree: %+v", c)
	}
}

// The gateway sanitizes what it stores even when the client did not.
func TestTracesSanitizedAgainOnIngest(t *testing.T) {
	g := gatewaytest.Start(t, gateway.Options{})
	tr := traceAt(time.Now(), 0, "wf", true, "http:get")
	tr.Tasks[0].Args = json.RawMessage(`{"url":"https://x.test","headers":{"Authorization":"Bearer abcdefghijklmnop1234"}}`)
	tr.Tasks[0].Result = json.RawMessage(`{"body":"key sk-proj-abcdefghijklmnopqrstuvwxyz012345 for alice@example.com","api_key":"plain"}`)
	tr.Logs = []string{"token=abcdefghijklmnopqrstuvwxyz0123456789"}
	postTraces(t, g.URL, g.Key, tr)
	_, body := apiCall(t, http.MethodGet, g.URL+"/api/traces/"+tr.TraceID, g.Key, nil, nil)
	for _, leak := range []string{"abcdefghijklmnop1234", "sk-proj-abcdefghijklmnopqrstuvwxyz012345", "alice@example.com", `"plain"`, "abcdefghijklmnopqrstuvwxyz0123456789"} {
		if strings.Contains(string(body), leak) {
			t.Errorf("stored trace leaks %q: %s", leak, body)
		}
	}
	if !strings.Contains(string(body), tracing.Redacted) || !strings.Contains(string(body), "[EMAIL]") {
		t.Errorf("no redaction markers: %s", body)
	}
}

func TestTracesRejectBadInput(t *testing.T) {
	g := gatewaytest.Start(t, gateway.Options{})
	valid := func() tracing.Trace { return traceAt(time.Now(), 0, "wf", true, "json:parse") }
	tooMany := make([]tracing.Trace, traceapi.MaxTracesPerRequest+1)
	for i := range tooMany {
		tooMany[i] = valid()
	}
	mutate := func(f func(*tracing.Trace)) any {
		tr := valid()
		f(&tr)
		return map[string]any{"traces": []tracing.Trace{valid(), tr}}
	}
	cases := []struct {
		name string
		body any
		want string
	}{
		{"not json", []byte(`{"traces": [`), "body must be"},
		{"no traces field", []byte(`{"trace": []}`), "no traces field"},
		{"wrong type", []byte(`{"traces": [{"trace_id": 7}]}`), "body must be"},
		{"too many", map[string]any{"traces": tooMany}, "at most 100"},
		{"missing id", mutate(func(tr *tracing.Trace) { tr.TraceID = "" }), "trace_id must be"},
		{"bad id", mutate(func(tr *tracing.Trace) { tr.TraceID = "../../etc" }), "only letters"},
		{"self parent", mutate(func(tr *tracing.Trace) { tr.ParentTraceID = tr.TraceID }), "parent_trace_id equals"},
		{"no start", mutate(func(tr *tracing.Trace) { tr.StartedAt = time.Time{} }), "started_at is required"},
		{"negative duration", mutate(func(tr *tracing.Trace) { tr.DurationMS = -1 }), "duration_ms -1 outside"},
		{"task without tool", mutate(func(tr *tracing.Trace) { tr.Tasks[0].Tool = "" }), "tool must be"},
		{"bad routing", mutate(func(tr *tracing.Trace) { tr.Tasks[0].Routing = "moon" }), "routing must be"},
	}
	for _, c := range cases {
		code, body := apiCall(t, http.MethodPost, g.URL+"/api/traces", g.Key, c.body, nil)
		var e struct{ Error, Message string }
		_ = json.Unmarshal(body, &e)
		if code != http.StatusBadRequest || e.Error != "invalid_traces" || !strings.Contains(e.Message, c.want) {
			t.Errorf("%s: %d %s; want 400 invalid_traces mentioning %q", c.name, code, body, c.want)
		}
		// The refused batch stored nothing, and the next request is served.
		if stored, _ := postTraces(t, g.URL, g.Key, valid()); stored != 1 {
			t.Fatalf("%s: next post stored %d", c.name, stored)
		}
	}
	if l := listTraces(t, g.URL, g.Key, ""); l.Total != len(cases) {
		t.Fatalf("after %d refused and %d good batches: %d traces stored", len(cases), len(cases), l.Total)
	}

	for _, q := range []string{"?success=maybe", "?since=yesterday", "?until=1e9x", "?limit=0", "?limit=1000", "?page=-1", "?page=x"} {
		code, body := apiCall(t, http.MethodGet, g.URL+"/api/traces"+q, g.Key, nil, nil)
		param := strings.SplitN(strings.TrimPrefix(q, "?"), "=", 2)[0]
		if code != http.StatusBadRequest || !strings.Contains(string(body), param) {
			t.Errorf("GET %s: %d %s; want 400 naming %s", q, code, body, param)
		}
		listTraces(t, g.URL, g.Key, "")
	}
	if code, _ := apiCall(t, http.MethodPost, g.URL+"/api/traces", "", map[string]any{"traces": []tracing.Trace{valid()}}, nil); code != http.StatusUnauthorized {
		t.Errorf("POST without a key: %d", code)
	}
	if code, _ := apiCall(t, http.MethodGet, g.URL+"/api/traces", "pml_wrong", nil, nil); code != http.StatusUnauthorized {
		t.Errorf("GET with a bad key: %d", code)
	}
}

func TestTracesTenantIsolation(t *testing.T) {
	g := gatewaytest.Start(t, gateway.Options{})
	other := g.NewKey(t, store.Scope{Org: "globex", Project: "web"})
	sameOrg := g.NewKey(t, store.Scope{Org: "acme", Project: "api"})
	mine := traceAt(time.Now(), 0, "wf-mine", true, "json:parse")
	postTraces(t, g.URL, g.Key, mine)

	for name, key := range map[string]string{"other org": other, "other project": sameOrg} {
		code, body := apiCall(t, http.MethodGet, g.URL+"/api/traces/"+mine.TraceID, key, nil, nil)
		if code != http.StatusNotFound || strings.Contains(string(body), "wf-mine") {
			t.Errorf("%s reads the trace: %d %s", name, code, body)
		}
		if l := listTraces(t, g.URL, key, ""); l.Total != 0 {
			t.Errorf("%s lists %d traces", name, l.Total)
		}
		if l := listTraces(t, g.URL, key, "?workflow_id=wf-mine"); l.Total != 0 {
			t.Errorf("%s finds the workflow", name)
		}
	}
	// Another tenant sending the same id stores its own trace; mine is untouched.
	theirs := mine
	theirs.WorkflowID = "wf-theirs"
	if stored, _ := postTraces(t, g.URL, other, theirs); stored != 1 {
		t.Fatalf("other tenant's trace with the same id not stored")
	}
	if got := getTree(t, g.URL, g.Key, mine.TraceID); got.Trace.WorkflowID != "wf-mine" {
		t.Fatalf("my trace changed: %+v", got.Trace)
	}
	if got := getTree(t, g.URL, other, mine.TraceID); got.Trace.WorkflowID != "wf-theirs" {
		t.Fatalf("their trace: %+v", got.Trace)
	}
	if code, body := apiCall(t, http.MethodGet, g.URL+"/api/traces/"+tracing.NewTraceID(), g.Key, nil, nil); code != http.StatusNotFound ||
		!strings.Contains(string(body), "in this API key's project") {
		t.Errorf("unknown id: %d %s", code, body)
	}
}
