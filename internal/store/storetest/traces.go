package storetest

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/store"
)

// t0 is the base time of trace fixtures: fixed, with sub-microsecond digits
// that the store must drop.
var t0 = time.Date(2025, 6, 1, 12, 0, 0, 500_999, time.UTC)

func trace(sc store.Scope, id string, at time.Duration) store.Trace {
	return store.Trace{
		ID: id, Scope: sc, WorkflowID: "wf-" + id, Success: true,
		StartedAt: t0.Add(at), Tools: []string{},
		Body: json.RawMessage(fmt.Sprintf(`{"id": %q, "events": [1, 2]}`, id)),
	}
}

func runTraces(t *testing.T, open func(t *testing.T) store.Store) {
	subtests(t, open, map[string]func(t *testing.T, s store.Store){
		"PutAndGet":              testPutAndGetTrace,
		"PutIsIdempotentOnID":    testPutIdempotent,
		"ByIDIsScoped":           testTraceScoped,
		"SameIDInTwoScopes":      testTraceSameIDTwoScopes,
		"ListFilters":            testListTraceFilters,
		"ListPagingAndOrder":     testListTracePaging,
		"Children":               testChildTraces,
		"EmptyBatchAndBadTraces": testBadTraces,
		"BodyWithNULCharacter":   testTraceBodyNUL,
		"FilterByCaller":         testTraceCaller,
	})
}

// The caller is stored, read back and filtered on.
func testTraceCaller(t *testing.T, s store.Store) {
	a, b, none := trace(acmeWeb, "a", 0), trace(acmeWeb, "b", time.Second), trace(acmeWeb, "c", 2*time.Second)
	a.Caller, b.Caller = "oidc:idp.invalid:alice", "key:k1"
	noErr(t, put(t.Context(), s, []store.Trace{a, b, none}))
	if got := must(s.TraceByID(t.Context(), acmeWeb, "a")).of(t); got.Caller != a.Caller {
		t.Fatalf("caller read back %q", got.Caller)
	}
	list, total := must2(s.ListTraces(t.Context(), store.TraceFilter{Scope: acmeWeb, Caller: "oidc:idp.invalid:alice"})).of(t)
	if total != 1 || list[0].ID != "a" {
		t.Fatalf("by caller: %d %+v", total, list)
	}
	if _, total := must2(s.ListTraces(t.Context(), store.TraceFilter{Scope: acmeAPI, Caller: "key:k1"})).of(t); total != 0 {
		t.Fatalf("another scope's caller matched %d", total)
	}
}

func testPutAndGetTrace(t *testing.T, s store.Store) {
	in := store.Trace{
		ID: "tr-1", ParentID: "tr-0", Scope: acmeWeb, WorkflowID: "wf-9", CapabilityFQDN: "acme.web.fs.copy.ab12",
		Tools: []string{"fs:read", "fs:write"}, Success: false, StartedAt: t0.In(time.FixedZone("X", -7200)),
		Body: json.RawMessage(`{"b": 1, "a": {"nested": [true, null]}}`),
	}
	noErr(t, put(t.Context(), s, []store.Trace{in}))
	got := must(s.TraceByID(t.Context(), acmeWeb, "tr-1")).of(t)
	if got.ID != in.ID || got.ParentID != in.ParentID || got.Scope != in.Scope || got.WorkflowID != in.WorkflowID ||
		got.CapabilityFQDN != in.CapabilityFQDN || got.Success != in.Success {
		t.Fatalf("TraceByID = %+v, want %+v", got, in)
	}
	sameStrings(t, "Tools", got.Tools, in.Tools)
	sameTime(t, "StartedAt", got.StartedAt, t0)
	sameJSON(t, "Body", got.Body, in.Body)

	_, err := s.TraceByID(t.Context(), acmeWeb, "tr-2")
	wantNotFound(t, err)
}

// PutTraces keeps the first of an id and says which traces were new.
func testPutIdempotent(t *testing.T, s store.Store) {
	wantFresh := func(got []bool, want ...bool) {
		t.Helper()
		if !slices.Equal(got, want) {
			t.Fatalf("fresh = %v, want %v", got, want)
		}
	}
	first := trace(acmeWeb, "tr-1", 0)
	wantFresh(must(s.PutTraces(t.Context(), []store.Trace{first, trace(acmeWeb, "tr-2", time.Second)})).of(t), true, true)
	resent := first
	resent.Body = json.RawMessage(`{"changed": true}`)
	resent.Success = false
	// The re-sent batch overlaps the stored one and adds one trace.
	wantFresh(must(s.PutTraces(t.Context(), []store.Trace{resent, trace(acmeWeb, "tr-3", 2*time.Second)})).of(t), false, true)
	got := must(s.TraceByID(t.Context(), acmeWeb, "tr-1")).of(t)
	sameJSON(t, "Body after re-send", got.Body, first.Body)
	if !got.Success {
		t.Error("re-sent trace overwrote Success")
	}
	_, total := must2(s.ListTraces(t.Context(), store.TraceFilter{Scope: acmeWeb})).of(t)
	if total != 3 {
		t.Errorf("%d traces stored, want 3", total)
	}
	// A batch that repeats an ID within itself keeps the first.
	dup1, dup2 := trace(acmeWeb, "tr-4", 0), trace(acmeWeb, "tr-4", 0)
	dup2.Body = json.RawMessage(`{"second": true}`)
	wantFresh(must(s.PutTraces(t.Context(), []store.Trace{dup1, dup2})).of(t), true, false)
	sameJSON(t, "Body of a duplicated ID", must(s.TraceByID(t.Context(), acmeWeb, "tr-4")).of(t).Body, dup1.Body)
	// An id is another scope's own: the same id in another project is new.
	wantFresh(must(s.PutTraces(t.Context(), []store.Trace{trace(acmeAPI, "tr-1", 0)})).of(t), true)
	wantFresh(must(s.PutTraces(t.Context(), nil)).of(t))
}

func testTraceScoped(t *testing.T, s store.Store) {
	noErr(t, put(t.Context(), s, []store.Trace{trace(acmeWeb, "tr-1", 0)}))
	for _, other := range []store.Scope{acmeAPI, globex} {
		_, err := s.TraceByID(t.Context(), other, "tr-1")
		wantNotFound(t, err)
		list, total := must2(s.ListTraces(t.Context(), store.TraceFilter{Scope: other})).of(t)
		if len(list) != 0 || total != 0 {
			t.Errorf("%v lists %d traces (total %d) of another scope", other, len(list), total)
		}
	}
}

func testTraceSameIDTwoScopes(t *testing.T, s store.Store) {
	a, b := trace(acmeWeb, "shared-id", 0), trace(globex, "shared-id", time.Second)
	b.Body = json.RawMessage(`{"tenant": "globex"}`)
	noErr(t, put(t.Context(), s, []store.Trace{a}))
	noErr(t, put(t.Context(), s, []store.Trace{b}))
	sameJSON(t, "acme's trace", must(s.TraceByID(t.Context(), acmeWeb, "shared-id")).of(t).Body, a.Body)
	sameJSON(t, "globex's trace", must(s.TraceByID(t.Context(), globex, "shared-id")).of(t).Body, b.Body)
}

func testListTraceFilters(t *testing.T, s store.Store) {
	fail := false
	mk := func(id string, at time.Duration, wf, fqdn string, ok bool, tools ...string) store.Trace {
		tr := trace(acmeWeb, id, at)
		tr.WorkflowID, tr.CapabilityFQDN, tr.Success, tr.Tools = wf, fqdn, ok, tools
		return tr
	}
	noErr(t, put(t.Context(), s, []store.Trace{
		mk("a", 0, "wf1", "acme.web.x.y.1111", true, "json:parse"),
		mk("b", time.Minute, "wf1", "", fail, "fs:read", "json:parse"),
		mk("c", 2*time.Minute, "wf2", "acme.web.x.y.1111", true, "fs:read"),
		mk("d", 3*time.Minute, "wf2", "acme.web.x.z.2222", fail),
		mk("e", 4*time.Minute, "wf3", "", true, "fs:readdir"),
		func() store.Trace { // a capability run nested in a
			tr := mk("f", 5*time.Minute, "", "acme.web.x.y.1111", true, "json:parse")
			tr.ParentID = "a"
			return tr
		}(),
	}))
	// Another scope's matching traces never show up.
	noErr(t, put(t.Context(), s, []store.Trace{func() store.Trace {
		tr := trace(globex, "z", time.Minute)
		tr.WorkflowID, tr.Tools = "wf1", []string{"fs:read"}
		return tr
	}()}))

	yes, no := true, false
	for _, tc := range []struct {
		name string
		f    store.TraceFilter
		want []string
	}{
		{"all newest first", store.TraceFilter{}, []string{"f", "e", "d", "c", "b", "a"}},
		{"top level", store.TraceFilter{TopLevel: true}, []string{"e", "d", "c", "b", "a"}},
		{"workflow", store.TraceFilter{WorkflowID: "wf1"}, []string{"b", "a"}},
		{"fqdn", store.TraceFilter{CapabilityFQDN: "acme.web.x.y.1111"}, []string{"f", "c", "a"}},
		{"fqdn, top level", store.TraceFilter{CapabilityFQDN: "acme.web.x.y.1111", TopLevel: true}, []string{"c", "a"}},
		{"tool exact match", store.TraceFilter{Tool: "fs:read"}, []string{"c", "b"}},
		{"tool unknown", store.TraceFilter{Tool: "fs"}, []string{}},
		{"success", store.TraceFilter{Success: &yes}, []string{"f", "e", "c", "a"}},
		{"failure", store.TraceFilter{Success: &no}, []string{"d", "b"}},
		{"since inclusive", store.TraceFilter{Since: t0.Add(3 * time.Minute)}, []string{"f", "e", "d"}},
		{"until exclusive", store.TraceFilter{Until: t0.Add(time.Minute)}, []string{"a"}},
		{"window", store.TraceFilter{Since: t0.Add(time.Minute), Until: t0.Add(3 * time.Minute)}, []string{"c", "b"}},
		{"combined", store.TraceFilter{WorkflowID: "wf2", Tool: "fs:read", Success: &yes}, []string{"c"}},
		{"combined, no match", store.TraceFilter{WorkflowID: "wf1", Success: &yes, Tool: "fs:read"}, []string{}},
	} {
		tc.f.Scope = acmeWeb
		got, total := must2(s.ListTraces(t.Context(), tc.f)).of(t)
		if got == nil {
			t.Errorf("%s: nil list, want a non-nil one", tc.name)
		}
		ids := make([]string, len(got))
		for i, tr := range got {
			ids[i] = tr.ID
		}
		if fmt.Sprint(ids) != fmt.Sprint(tc.want) || total != len(tc.want) {
			t.Errorf("%s: got %v (total %d), want %v", tc.name, ids, total, tc.want)
		}
	}
}

func testListTracePaging(t *testing.T, s store.Store) {
	var batch []store.Trace
	for i := range 12 {
		batch = append(batch, trace(acmeWeb, fmt.Sprintf("t%02d", i), time.Duration(i)*time.Second))
	}
	// Two traces at the same instant are ordered by ID, so pages never overlap.
	batch = append(batch, trace(acmeWeb, "t05b", 5*time.Second))
	noErr(t, put(t.Context(), s, batch))

	var seen []string
	for offset := 0; ; offset += 5 {
		page, total := must2(s.ListTraces(t.Context(), store.TraceFilter{Scope: acmeWeb, Limit: 5, Offset: offset})).of(t)
		if total != 13 {
			t.Fatalf("total = %d, want 13", total)
		}
		if len(page) == 0 {
			break
		}
		if len(page) > 5 {
			t.Fatalf("page of %d, limit 5", len(page))
		}
		for _, tr := range page {
			seen = append(seen, tr.ID)
		}
	}
	want := []string{"t11", "t10", "t09", "t08", "t07", "t06", "t05b", "t05", "t04", "t03", "t02", "t01", "t00"}
	sameStrings(t, "pages", seen, want)
}

func testChildTraces(t *testing.T, s store.Store) {
	root := trace(acmeWeb, "root", 0)
	child := func(id, parent string, at time.Duration, sc store.Scope) store.Trace {
		tr := trace(sc, id, at)
		tr.ParentID = parent
		return tr
	}
	noErr(t, put(t.Context(), s, []store.Trace{
		root,
		child("c2", "root", 2*time.Second, acmeWeb),
		child("c1", "root", time.Second, acmeWeb),
		child("g1", "c1", 3*time.Second, acmeWeb),
		child("foreign", "root", time.Second, globex),
	}))
	ids := func(ts []store.Trace) []string {
		out := make([]string, len(ts))
		for i, tr := range ts {
			out[i] = tr.ID
		}
		return out
	}
	sameStrings(t, "children of root", ids(must(s.ChildTraces(t.Context(), acmeWeb, "root")).of(t)), []string{"c1", "c2"})
	sameStrings(t, "children of c1", ids(must(s.ChildTraces(t.Context(), acmeWeb, "c1")).of(t)), []string{"g1"})
	sameStrings(t, "children of a leaf", ids(must(s.ChildTraces(t.Context(), acmeWeb, "g1")).of(t)), []string{})
	sameStrings(t, "globex's children of root", ids(must(s.ChildTraces(t.Context(), globex, "root")).of(t)), []string{"foreign"})
	// Roots have no parent; asking for the children of "" must not list them.
	sameStrings(t, "children of empty", ids(must(s.ChildTraces(t.Context(), acmeWeb, "")).of(t)), []string{})
}

func testBadTraces(t *testing.T, s store.Store) {
	noErr(t, put(t.Context(), s, nil))
	if err := put(t.Context(), s, []store.Trace{{Scope: acmeWeb}}); err == nil {
		t.Error("trace without an ID accepted")
	}
	bad := trace(acmeWeb, "bad", 0)
	bad.Body = json.RawMessage(`{"unterminated": `)
	if err := put(t.Context(), s, []store.Trace{trace(acmeWeb, "good", 0), bad}); err == nil {
		t.Error("trace with a malformed body accepted")
	}
	// The batch is all or nothing.
	_, err := s.TraceByID(t.Context(), acmeWeb, "good")
	wantNotFound(t, err)
	// No body and no start time: stored as absent and now.
	noErr(t, put(t.Context(), s, []store.Trace{{ID: "bare", Scope: acmeWeb}}))
	got := must(s.TraceByID(t.Context(), acmeWeb, "bare")).of(t)
	if len(got.Body) != 0 || !recent(got.StartedAt) || got.Tools == nil {
		t.Errorf("bare trace = %+v, want no body, StartedAt now, empty non-nil Tools", got)
	}
}

// Tool output may contain NUL bytes. Such a trace is stored, not rejected;
// a backend that cannot store U+0000 (PostgreSQL's jsonb) may replace it
// with U+FFFD.
func testTraceBodyNUL(t *testing.T, s store.Store) {
	tr := trace(acmeWeb, "nul", 0)
	tr.Body = json.RawMessage(`{"out": "a\u0000b", "n": [1, {"k\u0000": true}]}`)
	noErr(t, put(t.Context(), s, []store.Trace{tr, trace(acmeWeb, "next", 0)}))
	got := must(s.TraceByID(t.Context(), acmeWeb, "nul")).of(t)
	var body struct {
		Out string `json:"out"`
		N   []any  `json:"n"`
	}
	if err := json.Unmarshal(got.Body, &body); err != nil {
		t.Fatalf("stored body %s: %v", got.Body, err)
	}
	if body.Out != "a\x00b" && body.Out != "a\uFFFDb" {
		t.Errorf("out = %q, want a NUL or U+FFFD between a and b", body.Out)
	}
	if len(body.N) != 2 {
		t.Errorf("n = %v, want two elements", body.N)
	}
	must(s.TraceByID(t.Context(), acmeWeb, "next")).of(t)
}
