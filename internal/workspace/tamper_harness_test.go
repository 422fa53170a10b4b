package workspace

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/wire"
)

// tamperProxy is a real HTTP reverse proxy on loopback in front of a real
// gateway, as an attacker on the path would run it: it records every
// request the package makes and can rewrite the gateway's answers.
type tamperProxy struct {
	URL string

	mu     sync.Mutex
	target *url.URL
	seen   []proxiedRequest
	// answer, when set, edits each execute_locally answer (a JSON object).
	answer func(a map[string]any)
	// registry, when set, edits the metadata of each server entry served at
	// GET /mcp/pml.mcp.… (and the proxy drops If-None-Match, so the gateway
	// answers with a body to edit).
	registry func(meta map[string]any)
	// status, when non-zero, is answered to every request instead of
	// forwarding it.
	status int
}

// proxiedRequest is one request as the proxy saw it.
type proxiedRequest struct {
	Path     string
	Body     string
	Tool     string // tools/call: the gateway tool
	CallTool string // call: the server tool it runs
}

func startTamperProxy(t *testing.T, gatewayURL string) *tamperProxy {
	t.Helper()
	px := &tamperProxy{}
	px.retarget(t, gatewayURL)
	rp := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		px.mu.Lock()
		target, editRegistry := px.target, px.registry != nil
		px.mu.Unlock()
		r.SetURL(target)
		if editRegistry {
			r.Out.Header.Del("If-None-Match")
		}
	}, ModifyResponse: px.modify}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		_, tool, callTool := gatewaytest.ToolCallOf(body)
		px.mu.Lock()
		px.seen = append(px.seen, proxiedRequest{Path: r.URL.Path, Body: string(body), Tool: tool, CallTool: callTool})
		status := px.status
		px.mu.Unlock()
		if status != 0 {
			http.Error(w, http.StatusText(status), status)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	px.URL = srv.URL
	return px
}

// retarget points the proxy at another gateway (a restarted one).
func (px *tamperProxy) retarget(t *testing.T, gatewayURL string) {
	t.Helper()
	target, err := url.Parse(gatewayURL)
	if err != nil {
		t.Fatal(err)
	}
	px.mu.Lock()
	defer px.mu.Unlock()
	px.target = target
}

// setRegistry sets the registry edit.
func (px *tamperProxy) setRegistry(edit func(meta map[string]any)) {
	px.mu.Lock()
	defer px.mu.Unlock()
	px.registry, px.seen = edit, nil
}

func (px *tamperProxy) set(answer func(map[string]any), status int) {
	px.mu.Lock()
	defer px.mu.Unlock()
	px.answer, px.status, px.seen = answer, status, nil
}

func (px *tamperProxy) requests() []proxiedRequest {
	px.mu.Lock()
	defer px.mu.Unlock()
	return append([]proxiedRequest(nil), px.seen...)
}

// modify rewrites an execute_locally answer: the answer of
// POST /api/v1/execute, or inside the JSON-RPC response (each data line of
// the event stream the gateway answers with); or the metadata of a server
// entry.
func (px *tamperProxy) modify(resp *http.Response) error {
	px.mu.Lock()
	editAnswer, editRegistry := px.answer, px.registry
	px.mu.Unlock()
	path := resp.Request.URL.Path
	var edit func(body []byte) []byte
	switch {
	case path == "/mcp" && editAnswer != nil && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream"):
		edit = func(body []byte) []byte { return editEventStream(body, editAnswer) }
	case path == "/mcp" && editAnswer != nil && strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json"):
		// An answer without progress is plain JSON (docs/how-it-works.md).
		edit = func(body []byte) []byte { return editExecuteLocally(body, editAnswer) }
	case path == wire.ExecutePath && editAnswer != nil:
		// The package's own execute: the answer is the body (docs/protocol.md
		// "Plain execute").
		edit = func(body []byte) []byte { return editAnswerObject(body, editAnswer) }
	case !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json"):
	case strings.HasPrefix(path, "/mcp/pml.mcp.") && resp.StatusCode == http.StatusOK && editRegistry != nil:
		edit = func(body []byte) []byte {
			var meta map[string]any
			if json.Unmarshal(body, &meta) != nil {
				return body
			}
			editRegistry(meta)
			out, _ := json.Marshal(meta)
			return out
		}
	}
	if edit == nil {
		return nil
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	out := edit(body)
	resp.Body = io.NopCloser(bytes.NewReader(out))
	resp.ContentLength = int64(len(out))
	resp.Header.Set("Content-Length", strconv.Itoa(len(out)))
	return nil
}

// editEventStream applies edit to the execute_locally answer in each
// message of an event stream.
func editEventStream(body []byte, edit func(map[string]any)) []byte {
	lines := bytes.Split(body, []byte("\n"))
	for i, line := range lines {
		if data, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
			lines[i] = append([]byte("data: "), editExecuteLocally(data, edit)...)
		}
	}
	return bytes.Join(lines, []byte("\n"))
}

// editAnswerObject applies edit to body when it is an execute_locally
// answer.
func editAnswerObject(body []byte, edit func(map[string]any)) []byte {
	var a map[string]any
	if json.Unmarshal(body, &a) != nil || a["status"] != string(wire.StatusExecuteLocally) {
		return body
	}
	edit(a)
	out, _ := json.Marshal(a)
	return out
}

// editExecuteLocally applies edit to the answer in a JSON-RPC tool result
// when it is an execute_locally answer.
func editExecuteLocally(body []byte, edit func(map[string]any)) []byte {
	var rpc map[string]any
	if json.Unmarshal(body, &rpc) != nil {
		return body
	}
	res, _ := rpc["result"].(map[string]any)
	content, _ := res["content"].([]any)
	if len(content) != 1 {
		return body
	}
	item, _ := content[0].(map[string]any)
	text, _ := item["text"].(string)
	var a map[string]any
	if json.Unmarshal([]byte(text), &a) != nil || a["status"] != string(wire.StatusExecuteLocally) {
		return body
	}
	edit(a)
	edited, _ := json.Marshal(a)
	item["text"] = string(edited)
	out, _ := json.Marshal(rpc)
	return out
}
