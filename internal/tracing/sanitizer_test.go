package tracing

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
)

func TestSanitizerTrace(t *testing.T) {
	s := NewSanitizer([]string{"tvly-DEVKEY123"})
	tr := Trace{
		TraceID: "t", WorkflowID: "w",
		Error:     "tool failed: 401 for key tvly-DEVKEY123",
		Code:      `const r = await mcp.tavily.search({q: "x", api_key: "tvly-DEVKEY123"})`,
		Logs:      []string{"calling with Authorization: Bearer abcdef123456", "mail me at a@b.io"},
		Decisions: []Decision{{NodeID: "d1", Condition: `email == "a@b.io"`, Outcome: "true"}},
		DAG:       json.RawMessage(`{"tasks":[{"id":"t1","args":{"password":"x"}}]}`),
		Tasks: []Task{{
			TaskID: "t1", Tool: "tavily:search", ToolID: "tavily:search",
			Args:   json.RawMessage(`{"q":"x","api_key":"tvly-DEVKEY123"}`),
			Result: json.RawMessage(`{"answer":"your key tvly-DEVKEY123 works; call +1 415 555 0100"}`),
			Error:  "echo tvly-DEVKEY123",
		}},
	}
	got := s.Trace(tr)
	b, _ := json.Marshal(got)
	for _, leak := range []string{"tvly-DEVKEY123", "abcdef123456", "a@b.io", "415 555", `"password":"x"`} {
		if strings.Contains(string(b), leak) {
			t.Errorf("sanitized trace still holds %q: %s", leak, b)
		}
	}
	if got.TraceID != "t" || got.WorkflowID != "w" || got.Tasks[0].ToolID != "tavily:search" {
		t.Errorf("identifiers changed: %+v", got)
	}
	if tr.Tasks[0].Error != "echo tvly-DEVKEY123" {
		t.Errorf("Trace mutated its input")
	}
	again, _ := json.Marshal(s.Trace(got))
	if string(again) != string(b) {
		t.Errorf("Trace not idempotent:\n%s\n%s", b, again)
	}
}

// A trace's DAG is sanitized once per distinct DAG and sanitizer: the kept
// result is what sanitizing it again would give (secrets in a decision's
// condition included), callers get copies they may change, and a DAG over
// the bound is sanitized each time without being kept.
func TestSanitizerDAGCache(t *testing.T) {
	s := NewSanitizer([]string{"hunter2-very-secret"})
	dags := []string{
		`{"tasks":[{"id":"t1","tool":"fx:echo","layer":0,"depends_on":[]}]}`,
		`{"tasks":[],"decisions":[{"id":"d1","kind":"if","condition":"x === \"hunter2-very-secret\"","depends_on":[],"branches":[]}]}`,
		`{"tasks":[],"decisions":[{"id":"d1","kind":"if","condition":"k == 'sk-proj-AbCdEfGhIjKlMnOpQrStUv12'","depends_on":[],"branches":[]}]}`,
	}
	for _, d := range dags {
		want := string(s.Value(json.RawMessage(d)))
		for i := range 3 {
			got := s.fields(Trace{DAG: json.RawMessage(d)}).DAG
			if string(got) != want {
				t.Fatalf("run %d of %s: %s, want %s", i, d, got, want)
			}
			if strings.Contains(string(got), "hunter2") || strings.Contains(string(got), "sk-proj") {
				t.Fatalf("a secret left in %s", got)
			}
			clear(got) // a caller's change stays in its copy
		}
	}
	if n := s.dags.Len(); n != len(dags) {
		t.Fatalf("%d DAGs kept, want %d", n, len(dags))
	}
	big := `{"tasks":[],"decisions":[{"id":"d1","kind":"if","condition":"` + strings.Repeat("a", dagCacheMaxInput) + `","depends_on":[],"branches":[]}]}`
	if got, want := s.fields(Trace{DAG: json.RawMessage(big)}).DAG, s.Value(json.RawMessage(big)); string(got) != string(want) {
		t.Fatal("a large DAG is sanitized as before")
	}
	if n := s.dags.Len(); n != len(dags) {
		t.Fatalf("a DAG over %d bytes was kept", dagCacheMaxInput)
	}
	if other := NewSanitizer(nil); other.dags != nil {
		t.Fatal("a sanitizer keeps no DAG before it sanitizes one")
	}
}

// A trace's code is sanitized through a cache: the same output as without
// it, the secret masked on every hit, and code over the bound not kept.
func TestSanitizerCodeCache(t *testing.T) {
	s := NewSanitizer([]string{"hunter2-very-secret"})
	codes := []string{
		`return await mcp.fx.echo({message: "hi"})`,
		`const k = "hunter2-very-secret"; return await mcp.fx.echo({k})`,
		`const k = 'sk-proj-AbCdEfGhIjKlMnOpQrStUv12'; return k`,
	}
	for _, c := range codes {
		want := s.String(c)
		for i := range 3 {
			got := s.fields(Trace{Code: c}).Code
			if got != want {
				t.Fatalf("run %d of %s: %s, want %s", i, c, got, want)
			}
			if strings.Contains(got, "hunter2") || strings.Contains(got, "sk-proj") {
				t.Fatalf("a secret left in %s", got)
			}
		}
	}
	if n := s.codes.Len(); n != len(codes) {
		t.Fatalf("%d codes kept, want %d", n, len(codes))
	}
	big := "const k = 'hunter2-very-secret'; " + strings.Repeat("a", dagCacheMaxInput)
	if got := s.fields(Trace{Code: big}).Code; got != s.String(big) || strings.Contains(got, "hunter2") {
		t.Fatal("large code is sanitized as before")
	}
	if n := s.codes.Len(); n != len(codes) {
		t.Fatalf("code over %d bytes was kept", dagCacheMaxInput)
	}
	// A flood of distinct snippets (another tenant's, on a gateway's shared
	// sanitizer) keeps the cache within its bounds, and each answer right.
	for i := range 2 * dagCacheEntries {
		c := fmt.Sprintf("const k%d = 'hunter2-very-secret'; return %d", i, i)
		if got := s.fields(Trace{Code: c}).Code; got != s.String(c) || strings.Contains(got, "hunter2") {
			t.Fatalf("snippet %d: %s", i, got)
		}
	}
	if n := s.codes.Len(); n > dagCacheEntries {
		t.Fatalf("%d codes kept, at most %d", n, dagCacheEntries)
	}
}

// A call's arguments and result are sanitized through a cache of small
// values: the same output as without it, secrets masked on every hit, each
// caller with its own copy, and a value over the bound not kept.
func TestSanitizerValueCache(t *testing.T) {
	s := NewSanitizer([]string{"hunter2-very-secret"})
	values := []string{
		`{"message":"one"}`,
		`"Echo: one"`,
		`{"password":"pw","note":"hunter2-very-secret"}`,
		`"mail me at someone@example.com"`,
		`[1,2,{"token":"abc"}]`,
	}
	for _, v := range values {
		want := string(s.Value(json.RawMessage(v)))
		for i := range 3 {
			task := s.task(Task{Args: json.RawMessage(v), Result: json.RawMessage(v)}, partArgs|partResult)
			if string(task.Args) != want || string(task.Result) != want {
				t.Fatalf("run %d of %s: %s and %s, want %s", i, v, task.Args, task.Result, want)
			}
			if strings.Contains(want, "hunter2") || strings.Contains(want, "someone@") || strings.Contains(want, `"pw"`) {
				t.Fatalf("a secret left in %s", want)
			}
			clear(task.Args) // a caller's change stays in its copy
		}
	}
	if n := s.values.Len(); n != len(values) {
		t.Fatalf("%d values kept, want %d", n, len(values))
	}
	big := json.RawMessage(`"` + strings.Repeat("a", valueCacheMaxInput) + `"`)
	if got := s.task(Task{Result: big}, partResult).Result; string(got) != string(s.Value(big)) {
		t.Fatal("a large value is sanitized as before")
	}
	if n := s.values.Len(); n != len(values) {
		t.Fatalf("a value over %d bytes was kept", valueCacheMaxInput)
	}
}

// Traces finished at once share a sanitizer and its DAG cache.
func TestSanitizerDAGCacheConcurrent(t *testing.T) {
	s := NewSanitizer(nil)
	d := json.RawMessage(`{"tasks":[{"id":"t1","tool":"fx:echo","layer":0,"depends_on":[]}]}`)
	want := string(s.Value(d))
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				if got := s.fields(Trace{DAG: d}).DAG; string(got) != want {
					t.Errorf("%s, want %s", got, want)
					return
				}
			}
		})
	}
	wg.Wait()
}
