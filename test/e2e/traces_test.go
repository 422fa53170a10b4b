//go:build linux

package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/testfixture"
	"github.com/pml-go/pml/internal/wire"
	"github.com/pml-go/pml/internal/workspace"
)

// localRun runs one snippet with `pml exec` in local mode and returns its
// trace id.
func localRun(t *testing.T, dir, code string) string {
	t.Helper()
	out, errOut, rc := runPML(t, dir, nil, "", "exec", code)
	a := execAnswer(t, out, errOut)
	if rc != 0 || a.TraceID == "" {
		t.Fatalf("exit %d: %s\n%s", rc, out, errOut)
	}
	return a.TraceID
}

// `pml traces` in local mode lists the runs the in-process gateway stored
// and shows one as a tree; an unknown id or a bad limit is an error naming
// it, and the next command is served.
func TestTracesCommandLocalMode(t *testing.T) {
	dir := t.TempDir()
	id := localRun(t, dir, `const s = await mcp.crypto.sha256({data: "hi"}); return await mcp.math.add({a: 1, b: 2})`)

	out, errOut, rc := runPML(t, dir, nil, "", "traces")
	if rc != 0 || !strings.Contains(out, id) || !strings.Contains(out, "success") || !strings.Contains(out, "1 of 1 executions") {
		t.Fatalf("pml traces: exit %d\n%s\n%s", rc, out, errOut)
	}
	out, errOut, rc = runPML(t, dir, nil, "", "traces", id)
	if rc != 0 || !strings.HasPrefix(out, "execution "+id+"  success") ||
		!strings.Contains(out, "crypto:sha256") || !strings.Contains(out, "math:add") {
		t.Fatalf("pml traces ID: exit %d\n%s\n%s", rc, out, errOut)
	}
	out, errOut, rc = runPML(t, dir, nil, "", "traces", "--json", id)
	var node struct {
		Trace struct {
			TraceID string `json:"trace_id"`
		} `json:"trace"`
	}
	if rc != 0 || json.Unmarshal([]byte(out), &node) != nil || node.Trace.TraceID != id {
		t.Fatalf("pml traces --json ID: exit %d\n%s\n%s", rc, out, errOut)
	}

	_, errOut, rc = runPML(t, dir, nil, "", "traces", "0123456789abcdef0123456789abcdef")
	if rc != 1 || !strings.Contains(errOut, `no trace "0123456789abcdef0123456789abcdef"`) || !strings.Contains(errOut, "HTTP 404") {
		t.Fatalf("unknown id: exit %d\n%s", rc, errOut)
	}
	_, errOut, rc = runPML(t, dir, nil, "", "traces", "--limit", "0")
	if rc != 1 || !strings.Contains(errOut, "limit") || !strings.Contains(errOut, "HTTP 400") {
		t.Fatalf("bad limit: exit %d\n%s", rc, errOut)
	}
	if out, _, rc := runPML(t, dir, nil, "", "traces"); rc != 0 || !strings.Contains(out, id) {
		t.Fatalf("after the errors: exit %d\n%s", rc, out)
	}
}

// Local mode's `pml serve` serves the trace viewer: it prints the page's
// address with the token in its fragment; the page needs no token, the API
// it reads does (as Bearer), and answers the local store's traces; another
// origin is refused; each error leaves the next request served.
func TestServeTraceViewerLocalMode(t *testing.T) {
	dir := t.TempDir()
	id := localRun(t, dir, `return await mcp.crypto.sha256({data: "viewer"})`)
	port := freePort(t)
	cmd, _ := startServe(t, dir, nil, port)
	token := strings.TrimSpace(readFile(t, filepath.Join(dir, workspace.StateDir, workspace.ServeTokenFile)))
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	stderr := cmd.Stderr.(*lockedBuffer)
	waitFor(t, callTimeout, "the viewer's address", func() bool {
		return strings.Contains(stderr.String(), "Trace viewer: "+base+"/#token="+token+"\n")
	})

	get := func(path, bearer, origin string) (int, string, http.Header) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, base+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body), resp.Header
	}
	if st, body, h := get("/", "", ""); st != 200 || !strings.Contains(body, "/ui/app.js") || !strings.HasPrefix(h.Get("Content-Security-Policy"), "default-src 'none'") {
		t.Fatalf("GET /: %d %s", st, body)
	}
	if st, _, h := get("/api/traces", "", ""); st != http.StatusUnauthorized || h.Get("WWW-Authenticate") == "" {
		t.Fatalf("API without token: %d", st)
	}
	if st, _, _ := get("/api/traces", strings.Repeat("0", len(token)), ""); st != http.StatusUnauthorized {
		t.Fatalf("API with a wrong token: %d", st)
	}
	if st, _, _ := get("/api/traces", token, "http://evil.invalid"); st != http.StatusForbidden {
		t.Fatalf("API from another origin: %d", st)
	}
	st, body, _ := get("/api/traces", token, base)
	var page struct {
		Traces []struct {
			TraceID string `json:"trace_id"`
		} `json:"traces"`
		Total int `json:"total"`
	}
	if st != 200 || json.Unmarshal([]byte(body), &page) != nil || page.Total != 1 || page.Traces[0].TraceID != id {
		t.Fatalf("GET /api/traces: %d %s", st, body)
	}
	if st, body, _ := get("/api/traces/0123456789abcdef0123456789abcdef", token, ""); st != 404 || !strings.Contains(body, `"error":"not_found"`) {
		t.Fatalf("unknown trace: %d %s", st, body)
	}
	if st, body, _ := get("/api/traces/"+id, token, ""); st != 200 || !strings.Contains(body, `"crypto:sha256"`) {
		t.Fatalf("GET /api/traces/ID: %d %s", st, body)
	}

	// The page's catalog: what the workspace can call, behind the same token
	// and origin check (before, the page asked /mcp, the MCP endpoint: 400).
	if st, _, _ := get("/api/catalog", "", ""); st != http.StatusUnauthorized {
		t.Fatalf("catalog without token: %d", st)
	}
	if st, _, _ := get("/api/catalog", token, "http://evil.invalid"); st != http.StatusForbidden {
		t.Fatalf("catalog from another origin: %d", st)
	}
	st, body, _ = get("/api/catalog", token, base)
	var catalog workspace.Catalog
	if st != 200 || json.Unmarshal([]byte(body), &catalog) != nil || catalog.Total != len(catalog.Items) {
		t.Fatalf("GET /api/catalog: %d %s", st, body)
	}
	from := map[string]string{}
	for _, it := range catalog.Items {
		from[it.ID] = it.Source
	}
	if from["filesystem:read_file"] != "built-in" || from["crypto:sha256"] != "gateway" {
		t.Fatalf("catalog: %s", body)
	}
}

// With the gateway down, `pml traces` says it could not be reached and
// where, with no HTTP status: none arrived (issue 30, item 7).
func TestTracesGatewayUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := "http://" + ln.Addr().String()
	ln.Close()
	out, errOut, code := runPML(t, t.TempDir(), []string{"PML_CLOUD_URL=" + addr, "PML_API_KEY=pml_x"}, "", "traces")
	if code != 1 || out != "" || !strings.Contains(errOut, "could not reach the gateway at "+addr+" (from PML_CLOUD_URL)") || strings.Contains(errOut, "HTTP") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
}

// A failed hybrid run's trace lists the tools it called, in `pml traces`
// and its tree, which also says what was planned and never called (issue
// 30, item 6).
func TestTracesFailedRunListsCalledTools(t *testing.T) {
	g := startGateway(t, gateway.Options{})
	env := gatewayEnv(g)
	ws := testfixture.Workspace(t, nil)
	out, errOut, rc := runPML(t, ws, env, "", "exec", `const d = await mcp.filesystem.list_directory({path: "."}); const p = await mcp.json.parse({data: "[1]"}); if (p.length) throw new Error("boom"); return await mcp.math.add({a: 1, b: 2})`)
	a := execAnswer(t, out, errOut)
	if rc != 1 || a.ErrorCode != "CODE_ERROR" || a.TraceID == "" {
		t.Fatalf("exit %d\n%s\n%s", rc, out, errOut)
	}
	var list string
	testfixture.WaitFor(t, "the trace on the gateway", func() bool {
		list, _, rc = runPML(t, ws, env, "", "traces")
		return rc == 0 && strings.Contains(list, a.TraceID)
	})
	for _, line := range strings.Split(list, "\n") {
		if strings.HasPrefix(line, a.TraceID) && (!strings.Contains(line, "filesystem:list_directory, json:parse") || strings.Contains(line, "math:add")) {
			t.Fatalf("tools of the failed run: %q", line)
		}
	}
	tree, errOut, rc := runPML(t, ws, env, "", "traces", a.TraceID)
	if rc != 0 || !strings.Contains(tree, "planned, not called: math:add") {
		t.Fatalf("exit %d\n%s\n%s", rc, tree, errOut)
	}
}

// pml stdio queues a run's trace after writing its answer
// (internal/afteranswer), whether the package ran it (a local tool) or the
// in-process gateway did (a built-in of the gateway). A client that closes
// the session as soon as it has its answer still finds the trace: the
// session's end waits for the queueing, and the outbox is delivered to the
// local store on exit. Six sessions, each closed at once after one execute.
func TestStdioTraceSurvivesAClientLeavingAtOnce(t *testing.T) {
	dir := testfixture.Workspace(t, map[string]any{})
	var ids []string
	for i := range 6 {
		p := startStdio(t, dir, nil)
		var a wire.Answer
		if i%2 == 0 {
			a = p.execute(t, `return await mcp.filesystem.list_directory({path: "."})`)
			wantLocal(t, a, nil)
		} else {
			a = p.execute(t, `return await mcp.math.add({a: 1, b: `+strconv.Itoa(i)+`})`)
			var sum int
			if wantSuccess(t, a, &sum); sum != 1+i || a.TraceID == "" {
				t.Fatalf("session %d: %d, trace %q", i, sum, a.TraceID)
			}
		}
		ids = append(ids, a.TraceID)
		if err := p.session.Close(); err != nil {
			t.Fatalf("closing session %d: %v", i, err)
		}
	}
	out, errOut, rc := runPML(t, dir, nil, "", "traces", "--limit", "10")
	if rc != 0 {
		t.Fatalf("pml traces: exit %d\n%s\n%s", rc, out, errOut)
	}
	for i, id := range ids {
		if !strings.Contains(out, id) {
			t.Errorf("session %d's trace %s is missing:\n%s", i, id, out)
		}
	}
}

// A call cancelled while its run waits on a local server is answered at
// once; the run ends after that answer, and its trace, kept then, is not
// lost when the client closes the session right away (the package waits
// for its runs before it closes the outbox). The next call is served.
func TestStdioCancelledRunKeepsItsTrace(t *testing.T) {
	dir := testfixture.Workspace(t, map[string]any{"fx": map[string]any{"command": testfixture.BuildServer(t)}})
	p := startStdio(t, dir, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	_, err := p.session.CallTool(ctx, &mcp.CallToolParams{Name: "execute",
		Arguments: wire.ExecuteRequest{Code: `await mcp.fx.sleep({ms: 5000}); return 1`}})
	cancel()
	if err == nil {
		t.Fatal("the cancelled call answered")
	}
	a := p.execute(t, `return await mcp.math.add({a: 2, b: 2})`)
	var sum int
	if wantSuccess(t, a, &sum); sum != 4 {
		t.Fatalf("next call: %d", sum)
	}
	if err := p.session.Close(); err != nil {
		t.Fatal(err)
	}
	out, errOut, rc := runPML(t, dir, nil, "", "traces", "--limit", "10")
	if rc != 0 || !strings.Contains(out, "2 of 2 executions") || !strings.Contains(out, a.TraceID) || !strings.Contains(out, "CANCELLED") {
		t.Fatalf("pml traces: exit %d\n%s\n%s", rc, out, errOut)
	}
}
