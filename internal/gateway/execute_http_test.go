package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/admission"
	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/testfixture"
	"github.com/pml-go/pml/internal/tracing"
	"github.com/pml-go/pml/internal/wire"
)

// postExecute sends body to POST /api/v1/execute with key (none when
// empty) and the headers hdr (Content-Type application/json unless hdr
// says otherwise).
func postExecute(t *testing.T, g *gatewaytest.Gateway, key string, body []byte, hdr map[string]string) (*http.Response, []byte) {
	t.Helper()
	return gatewaytest.Do(t, http.MethodPost, g.URL+wire.ExecutePath, key, bytes.NewReader(body), hdr)
}

// plainExecute posts call as the package would and decodes the answer,
// which must come with 200.
func plainExecute(t *testing.T, g *gatewaytest.Gateway, key string, call wire.ExecuteCall, asPackage bool) (wire.Answer, []byte) {
	t.Helper()
	body, err := json.Marshal(call)
	if err != nil {
		t.Fatal(err)
	}
	hdr := map[string]string{}
	if asPackage {
		hdr[wire.ClientHeader] = "package"
	}
	resp, raw := postExecute(t, g, key, body, hdr)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("POST %s: %d %q: %s", wire.ExecutePath, resp.StatusCode, resp.Header.Get("Content-Type"), raw)
	}
	var a wire.Answer
	if err := json.Unmarshal(raw, &a); err != nil {
		t.Fatalf("answer is not JSON: %v: %s", err, raw)
	}
	return a, raw
}

// wantRefusal checks an HTTP error answer of the gateway's API.
func wantRefusal(t *testing.T, what string, resp *http.Response, raw []byte, status int, code string) {
	t.Helper()
	var body struct {
		Error   string `json:"error"`
		Message string `json:"message"`
	}
	if resp.StatusCode != status || json.Unmarshal(raw, &body) != nil || body.Error != code || body.Message == "" {
		t.Fatalf("%s: %d %s, want %d %s", what, resp.StatusCode, raw, status, code)
	}
}

// POST /api/v1/execute is the execute tool without MCP's framing: a server
// run answers as over MCP and is kept under the trace id the body asks
// for; client-routed code is execute_locally for the package only, with
// just what the package reads; a package-less caller gets the tool's error.
func TestPlainExecute(t *testing.T) {
	g := startWithFixture(t)
	id := tracing.NewTraceID()
	a, _ := plainExecute(t, g, g.Key, wire.ExecuteCall{ExecuteRequest: wire.ExecuteRequest{Code: `return await mcp.math.add({a: 1, b: 2})`}, TraceID: id}, true)
	if a.Status != wire.StatusSuccess || string(a.Result) != "3" || a.TraceID != id {
		t.Fatalf("server run: %+v, want 3 under trace %s", a, id)
	}
	testfixture.WaitFor(t, "the run's trace under the id asked for", func() bool {
		tr, err := g.Service.Store().TraceByID(context.Background(), store.Scope{Org: "acme", Project: "web"}, id)
		return err == nil && tr.Success
	})

	code := `const c = await mcp.filesystem.read_file({path: "/tmp/x"}); return await mcp.json.parse({data: c})`
	a, raw := plainExecute(t, g, g.Key, wire.ExecuteCall{ExecuteRequest: wire.ExecuteRequest{Code: code}, TraceID: tracing.NewTraceID()}, true)
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		t.Fatal(err)
	}
	if a.Status != wire.StatusExecuteLocally || a.CodeHash != wire.CodeHash(code) || a.WorkflowID == "" || len(keys) != 3 {
		t.Fatalf("execute_locally: want only status, code_hash and workflow_id: %s", raw)
	}
	a, _ = plainExecute(t, g, g.Key, wire.ExecuteCall{ExecuteRequest: wire.ExecuteRequest{Code: code}}, false)
	wantError(t, a, pmlerr.ClientToolsRequirePackage)
}

// Each malformed or unauthorised request gets its error, and the gateway
// serves the next request.
func TestPlainExecuteRefusals(t *testing.T) {
	g := gatewaytest.Start(t, gateway.Options{})
	good := func(what string) {
		t.Helper()
		a, _ := plainExecute(t, g, g.Key, wire.ExecuteCall{ExecuteRequest: wire.ExecuteRequest{Code: `return await mcp.math.add({a: 2, b: 3})`}}, true)
		if a.Status != wire.StatusSuccess || string(a.Result) != "5" {
			t.Fatalf("after %s: %+v", what, a)
		}
	}
	good("nothing")
	ok := []byte(`{"code":"return 1"}`)
	for _, c := range []struct {
		what   string
		key    string
		body   []byte
		hdr    map[string]string
		status int
		code   string
	}{
		{"no key", "", ok, nil, http.StatusUnauthorized, "unauthorized"},
		{"a wrong key", "pml_not_a_key", ok, nil, http.StatusUnauthorized, "unauthorized"},
		{"a form body", g.Key, ok, map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, http.StatusUnsupportedMediaType, "unsupported_media_type"},
		{"no content type", g.Key, ok, map[string]string{"Content-Type": ""}, http.StatusUnsupportedMediaType, "unsupported_media_type"},
		{"broken JSON", g.Key, []byte(`{"code":`), nil, http.StatusBadRequest, "bad_request"},
		{"a code that is not a string", g.Key, []byte(`{"code":5}`), nil, http.StatusBadRequest, "bad_request"},
		{"an array", g.Key, []byte(`[]`), nil, http.StatusBadRequest, "bad_request"},
		{"an empty body", g.Key, nil, nil, http.StatusBadRequest, "bad_request"},
		{"a body over 1 MiB", g.Key, append(append([]byte(`{"code":"return 1","intent":"`), bytes.Repeat([]byte("x"), wire.MaxRequestBytes)...), `"}`...), nil, http.StatusRequestEntityTooLarge, "request_too_large"},
	} {
		resp, raw := postExecute(t, g, c.key, c.body, c.hdr)
		wantRefusal(t, c.what, resp, raw, c.status, c.code)
		good(c.what)
	}
	// A request the execute tool refuses is its answer, as over MCP.
	for what, body := range map[string]string{
		"args that are not an object": `{"code":"return 1","args":[1]}`,
		"a negative timeout":          `{"code":"return 1","options":{"timeout_ms":-1}}`,
		"always without approval":     `{"code":"return 1","continue_workflow":{"workflow_id":"w","approved":false,"always":true}}`,
	} {
		resp, raw := postExecute(t, g, g.Key, []byte(body), nil)
		var a wire.Answer
		if resp.StatusCode != http.StatusOK || json.Unmarshal(raw, &a) != nil {
			t.Fatalf("%s: %d %s", what, resp.StatusCode, raw)
		}
		wantError(t, a, pmlerr.InvalidRequest)
		good(what)
	}
	// A malformed trace id is ignored: the run gets a fresh one.
	a, _ := plainExecute(t, g, g.Key, wire.ExecuteCall{ExecuteRequest: wire.ExecuteRequest{Code: `return await mcp.math.add({a: 1, b: 1})`}, TraceID: "../not-an-id"}, true)
	if a.Status != wire.StatusSuccess || !tracing.ValidTraceID(a.TraceID) {
		t.Fatalf("malformed trace id: %+v", a)
	}
}

// A key reaches its own tenant only: another tenant's capability is not
// its to run, and a trace id another tenant already used names
// that tenant's trace for nobody else.
func TestPlainExecuteStaysInTenant(t *testing.T) {
	g, _, _ := mytoolSum(t)
	other := g.NewKey(t, store.Scope{Org: "globex", Project: "api"})
	const code = `return await mcp.mytool.sum({a: 1, b: 2})`
	id := tracing.NewTraceID()
	if a, _ := plainExecute(t, g, g.Key, wire.ExecuteCall{ExecuteRequest: wire.ExecuteRequest{Code: code}, TraceID: id}, false); a.Status != wire.StatusSuccess || string(a.Result) != "3" {
		t.Fatalf("the owner's run: %+v", a)
	}
	// Not a capability of its tenant, the name is a tool of the caller's
	// machine, which a package-less caller cannot run.
	a, _ := plainExecute(t, g, other, wire.ExecuteCall{ExecuteRequest: wire.ExecuteRequest{Code: code}, TraceID: id}, false)
	wantError(t, a, pmlerr.ClientToolsRequirePackage)
	ctx := context.Background()
	testfixture.WaitFor(t, "the owner's trace", func() bool {
		tr, err := g.Service.Store().TraceByID(ctx, store.Scope{Org: "acme", Project: "web"}, id)
		return err == nil && tr.Success
	})
	// A run of the other tenant asking for the owner's trace id.
	if a, _ := plainExecute(t, g, other, wire.ExecuteCall{ExecuteRequest: wire.ExecuteRequest{Code: `return await mcp.math.add({a: 5, b: 5})`}, TraceID: id}, false); a.Status != wire.StatusSuccess {
		t.Fatalf("the other tenant's run: %+v", a)
	}
	if tr, err := g.Service.Store().TraceByID(ctx, store.Scope{Org: "acme", Project: "web"}, id); err != nil || !strings.Contains(string(tr.Body), "mytool") {
		t.Fatalf("the owner's trace after the other tenant's run: %v %s", err, tr.Body)
	}
	if resp, raw := gatewaytest.Do(t, http.MethodGet, g.URL+"/api/traces/"+id, other, nil, nil); resp.StatusCode == http.StatusOK && strings.Contains(string(raw), "mytool.sum({a: 1, b: 2})") && strings.Contains(string(raw), `"success":true`) {
		t.Fatalf("the other tenant reads the owner's trace: %s", raw)
	}
}

// The endpoint sheds load and drains as the MCP endpoint does: 429 with
// Retry-After when places and queue are full, a run CancelRuns ends answers
// CANCELLED, and 503 draining once admission stops.
func TestPlainExecuteOverloadAndDrain(t *testing.T) {
	g, gate := startAdmitting(t, admission.Limits{MaxExecutions: 1, MaxExecutionsPerTenant: 1, MaxQueue: 1, QueueWait: 4 * time.Second})
	s := g.Connect(t, g.Key, false)
	parked := holdAsync(s)
	testfixture.WaitFor(t, "an execution at the gate", func() bool { return gate.Waiting() == 1 })
	queued := holdAsync(s)
	testfixture.WaitFor(t, "one request queued", func() bool { return g.Service.Admission().Stats().Queued == 1 })
	resp, raw := postExecute(t, g, g.Key, []byte(`{"code":"return 1"}`), nil)
	wantRefusal(t, "saturated", resp, raw, http.StatusTooManyRequests, "overloaded")
	if resp.Header.Get("Retry-After") != "4" {
		t.Fatalf("Retry-After %q", resp.Header.Get("Retry-After"))
	}
	gate.Open()
	wantSuccess(t, <-parked, holdWant)
	wantSuccess(t, <-queued, holdWant)

	g, gate = startAdmitting(t, admission.Limits{})
	done := make(chan wire.Answer, 1)
	go func() {
		body := []byte(`{"code":` + strconv.Quote(holdCode) + `}`)
		resp, raw := postExecute(t, g, g.Key, body, nil)
		var a wire.Answer
		if resp.StatusCode != http.StatusOK || json.Unmarshal(raw, &a) != nil {
			a = wire.ErrorAnswer(pmlerr.New(pmlerr.Internal, "HTTP %d: %s", resp.StatusCode, raw), "")
		}
		done <- a
	}()
	testfixture.WaitFor(t, "a plain execution at the gate", func() bool { return gate.Waiting() == 1 })
	g.Service.StopAdmitting()
	resp, raw = postExecute(t, g, g.Key, []byte(`{"code":"return 1"}`), nil)
	wantRefusal(t, "draining", resp, raw, http.StatusServiceUnavailable, "draining")
	if resp.Header.Get(wire.DrainingHeader) == "" || resp.Header.Get("Retry-After") != "1" {
		t.Fatalf("draining headers: %v", resp.Header)
	}
	g.Service.CancelRuns()
	wantError(t, <-done, pmlerr.Cancelled)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if left := g.Service.WaitIdle(ctx); left != 0 {
		t.Fatalf("%d requests left in flight", left)
	}
}

// The plain execute answer reaches the package before the gateway writes
// the request's access line: a log that blocks on that line holds up no
// answer (docs/performance.md "The hybrid path").
func TestPlainExecuteAnswersBeforeTheAccessLine(t *testing.T) {
	logged := make(chan struct{})
	release := make(chan struct{})
	h := &holdAccessLine{path: wire.ExecutePath, logged: logged, release: release}
	g := gatewaytest.Start(t, gateway.Options{Logger: slog.New(h)})
	defer close(release)
	code := `return await mcp.filesystem.read_file({path: "/tmp/x"})`
	done := make(chan wire.Answer, 1)
	go func() {
		a, _ := plainExecute(t, g, g.Key, wire.ExecuteCall{ExecuteRequest: wire.ExecuteRequest{Code: code}, TraceID: tracing.NewTraceID()}, true)
		done <- a
	}()
	select {
	case <-logged:
	case <-time.After(10 * time.Second):
		t.Fatal("no access line for the execute")
	}
	select {
	case a := <-done:
		if a.Status != wire.StatusExecuteLocally || a.CodeHash != wire.CodeHash(code) {
			t.Fatalf("answer %+v, want execute_locally for the code", a)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the answer waited for the access line")
	}
}

// holdAccessLine is a log handler that blocks the access line of path
// until release is closed, after saying so on logged.
type holdAccessLine struct {
	path    string
	logged  chan<- struct{}
	release <-chan struct{}
	once    sync.Once
}

func (h *holdAccessLine) Enabled(context.Context, slog.Level) bool { return true }
func (h *holdAccessLine) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *holdAccessLine) WithGroup(string) slog.Handler            { return h }

func (h *holdAccessLine) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "request" {
		return nil
	}
	hold := false
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "path" && a.Value.String() == h.path {
			hold = true
		}
		return true
	})
	if hold {
		h.once.Do(func() { close(h.logged) })
		<-h.release
	}
	return nil
}
