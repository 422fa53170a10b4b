package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"net/http"
	"os"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/httpserve"
	"github.com/pml-go/pml/internal/mcpdirect"
	"github.com/pml-go/pml/internal/stdioconn"
	"github.com/pml-go/pml/internal/wire"
)

// directCalls serves the MCP endpoint's hot request, one stateless
// tools/call of a gateway tool, without the SDK's streamable handler
// (docs/architecture.md "The MCP endpoint"): the body is decoded once, the
// tool's handler runs on the request's own goroutine behind the same
// receiving middleware, and the answer is the JSON-RPC response the SDK
// would write. Anything else, and any request whose answer the SDK would
// shape differently (an error of the transport, a progress token, a client
// that can be asked for input, a compatibility switch of the SDK), goes to
// next, the SDK's handler, unchanged. The SDK's per-request session, its
// goroutines and its repeated decoding of the body are what this saves
// (docs/performance.md "Near the floor (issue 42)").
type directCalls struct {
	next     http.Handler
	tools    map[string]bool
	handle   mcp.MethodHandler // mcpReceiving around the tool's handler
	impl     *mcp.Implementation
	versions []string
	log      *slog.Logger
}

// newDirectCalls serves tools directly and everything else with next. With
// MCPGODEBUG set, the SDK may answer otherwise than its defaults, which the
// direct path knows: next serves every request then.
func newDirectCalls(tools []wire.ServerTool, next http.Handler, log *slog.Logger) http.Handler {
	if os.Getenv("MCPGODEBUG") != "" {
		return next
	}
	handlers := make(map[string]mcp.ToolHandler, len(tools))
	names := make(map[string]bool, len(tools))
	for _, t := range tools {
		handlers[t.Tool.Name] = t.Handler
		names[t.Tool.Name] = true
	}
	var handle mcp.MethodHandler = func(ctx context.Context, _ string, req mcp.Request) (mcp.Result, error) {
		call := req.(*mcp.CallToolRequest)
		return handlers[call.Params.Name](ctx, call)
	}
	mw := mcpReceiving()
	for i := len(mw) - 1; i >= 0; i-- { // the first runs first, as AddReceivingMiddleware
		handle = mw[i](handle)
	}
	return &directCalls{next: next, tools: names, handle: handle, impl: mcpImplementation(),
		versions: mcp.SupportedProtocolVersions(), log: log}
}

func (d *directCalls) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, ok := httpserve.Buffered(r)
	if !ok || r.Method != http.MethodPost {
		d.next.ServeHTTP(w, r)
		return
	}
	call, ok := d.parse(r.Header, body)
	if !ok {
		d.next.ServeHTTP(w, r)
		return
	}
	d.serve(w, r, call)
}

// serve runs call's tool and writes its answer as the SDK's JSON response
// mode does: the result the SDK's server would send (an empty content list
// rather than none; on protocol 2026-07-28, resultType "complete" and the
// server's name in _meta), status 200 unless a JSON-RPC error of that
// protocol maps to another.
func (d *directCalls) serve(w http.ResponseWriter, r *http.Request, call directCall) {
	ctx := r.Context()
	req := &mcp.CallToolRequest{Params: call.params, Extra: &mcp.RequestExtra{
		TokenInfo: auth.TokenInfoFromContext(ctx),
		Header:    r.Header,
	}}
	resp := &jsonrpc.Response{ID: call.id}
	res, err := d.handle(ctx, mcpdirect.MethodCallTool, req)
	if err != nil {
		resp.Error = err
	} else if resp.Result, err = d.result(res, call.newProtocol); err != nil {
		d.log.Error("mcp: writing a tool result", "tool", call.params.Name, "err", err)
		resp.Result, resp.Error = nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	}
	data, err := stdioconn.EncodeMessage(resp)
	if err != nil {
		d.log.Error("mcp: encoding a response", "tool", call.params.Name, "err", err)
		http.Error(w, "encoding the response failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Cache-Control", "no-cache, no-transform")
	w.Header().Set("Content-Type", "application/json")
	if status := errorStatus(resp.Error, call.newProtocol); status != 0 {
		w.WriteHeader(status)
	}
	_, _ = w.Write(data)
}

// resultTypeComplete opens a result of protocol 2026-07-28, which the SDK
// marks complete; the field is not settable from outside the SDK.
const resultTypeComplete = `{"resultType":"complete",`

// result encodes a tool's result as the SDK's server sends it.
func (d *directCalls) result(res mcp.Result, newProtocol bool) (json.RawMessage, error) {
	ctr, ok := res.(*mcp.CallToolResult)
	if !ok || ctr == nil {
		return nil, errors.New("a tool handler returned no result")
	}
	if ctr.InputRequests != nil {
		// parse sends clients that could be asked for input to the SDK.
		return nil, errors.New("a tool asked for input on the direct path")
	}
	out := *ctr
	if out.Content == nil {
		out.Content = []mcp.Content{}
	}
	if newProtocol {
		if _, ok := out.Meta[mcp.MetaKeyServerInfo]; !ok {
			m := maps.Clone(out.Meta)
			if m == nil {
				m = mcp.Meta{}
			}
			m[mcp.MetaKeyServerInfo] = d.impl
			out.Meta = m
		}
	}
	data, err := mcpdirect.EncodeResult(&out)
	if err != nil {
		return nil, err
	}
	if newProtocol && len(data) > 2 && data[0] == '{' {
		data = append([]byte(resultTypeComplete), data[1:]...)
	}
	return data, nil
}

// errorStatus is the HTTP status of a JSON-RPC error answer on protocol
// 2026-07-28 (0: 200), as the SDK's streamable transport maps it.
func errorStatus(err error, newProtocol bool) int {
	var jerr *jsonrpc.Error
	if !newProtocol || err == nil || !errors.As(err, &jerr) {
		return 0
	}
	switch jerr.Code {
	case jsonrpc.CodeMethodNotFound:
		return http.StatusNotFound
	case jsonrpc.CodeInvalidParams, mcp.CodeUnsupportedProtocolVersion, mcp.CodeMissingRequiredClientCapabilities:
		return http.StatusBadRequest
	}
	return 0
}
