package gateway

import (
	"bytes"
	"encoding/json"
	"mime"
	"net/http"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/mcpdirect"
)

// directCall is a tools/call request the direct path serves.
type directCall struct {
	id     jsonrpc.ID
	params *mcp.CallToolParamsRaw
	// newProtocol: the request is of MCP 2026-07-28 or later, whose
	// results the SDK marks (directCalls.result).
	newProtocol bool
}

// The MCP headers the SDK's streamable handler reads.
const (
	protocolVersionHeader = "Mcp-Protocol-Version"
	sessionIDHeader       = "Mcp-Session-Id"
	methodHeader          = "Mcp-Method"
	nameHeader            = "Mcp-Name"
	lastEventIDHeader     = "Last-Event-ID"
)

// newProtocolVersion is MCP 2026-07-28, from which a request carries its
// protocol version, client and capabilities in _meta (docs/protocol.md).
const newProtocolVersion = "2026-07-28"

// parse returns the request in h and body when it is one the direct path
// serves: a POST the SDK's stateless handler would accept as it stands
// (Content-Type, Accept, a protocol version it supports in its header, no
// session or Last-Event-ID header, a body within its bound), holding one
// JSON-RPC call of tools/call, every key one the SDK reads and matched
// exactly as the SDK's decoder matches keys, naming a gateway tool, with no
// progress token (its answer is an event stream: plainUnlessProgress), and
// from a client that cannot be asked for input. On protocol 2026-07-28 the
// request's _meta must also say that version, and the Mcp-Method and
// Mcp-Name headers the call. Everything else is false: the SDK answers it.
func (d *directCalls) parse(h http.Header, body []byte) (directCall, bool) {
	var none directCall
	if len(body) == 0 || len(body) > mcp.DefaultMaxRequestBodyBytes ||
		mcpdirect.HasProgressToken(body) ||
		h.Get(sessionIDHeader) != "" || len(h.Values(lastEventIDHeader)) > 0 {
		return none, false
	}
	if mt, _, err := mime.ParseMediaType(h.Get("Content-Type")); err != nil || mt != "application/json" {
		return none, false
	}
	if jsonOK, streamOK := streamableAccepts(h.Values("Accept")); !jsonOK || !streamOK {
		return none, false
	}
	version := h.Get(protocolVersionHeader)
	if !slices.Contains(d.versions, version) {
		return none, false
	}
	call := directCall{newProtocol: version >= newProtocolVersion}
	var msg map[string]json.RawMessage
	if b := bytes.TrimLeft(body, " \t\r\n"); len(b) == 0 || b[0] != '{' || json.Unmarshal(body, &msg) != nil {
		return none, false
	}
	for k := range msg {
		if k != "jsonrpc" && k != "id" && k != "method" && k != "params" {
			return none, false
		}
	}
	var tag, method string
	var rawID any
	if json.Unmarshal(msg["jsonrpc"], &tag) != nil || tag != "2.0" ||
		json.Unmarshal(msg["method"], &method) != nil || method != mcpdirect.MethodCallTool ||
		json.Unmarshal(msg["id"], &rawID) != nil {
		return none, false
	}
	id, err := jsonrpc.MakeID(rawID)
	if err != nil || !id.IsValid() {
		return none, false
	}
	call.id = id
	params, ok := d.parseParams(msg["params"])
	if !ok {
		return none, false
	}
	call.params = params
	if !d.protocolAgrees(h, call) {
		return none, false
	}
	return call, true
}

// parseParams decodes a tools/call's params as the SDK's
// CallToolParamsRaw (mcpdirect.CallParams), for a gateway tool's call.
func (d *directCalls) parseParams(raw json.RawMessage) (*mcp.CallToolParamsRaw, bool) {
	p, ok := mcpdirect.CallParams(raw)
	if !ok || !d.tools[p.Name] {
		return nil, false
	}
	return p, true
}

// protocolAgrees checks what the SDK checks of a call's protocol: before
// 2026-07-28, that its _meta names no protocol version (the SDK would
// compare it with the header); from 2026-07-28, that its _meta names the
// header's version, holds client capabilities the SDK can read (and client
// info, when present), and that the Mcp-Method and Mcp-Name headers name
// the call. A client that declares elicitation is the SDK's to serve: the
// gateway may answer it with an approval form.
func (d *directCalls) protocolAgrees(h http.Header, call directCall) bool {
	meta := call.params.Meta
	if !call.newProtocol {
		_, named := meta[mcp.MetaKeyProtocolVersion]
		return !named
	}
	if v, _ := meta[mcp.MetaKeyProtocolVersion].(string); v != h.Get(protocolVersionHeader) {
		return false
	}
	if h.Get(methodHeader) != mcpdirect.MethodCallTool || h.Get(nameHeader) != call.params.Name {
		return false
	}
	// The SDK reads both with its own decoder, which takes a 32 KiB buffer
	// each time: the shapes every client sends are known to read, and to
	// declare no elicitation, without it.
	req := &mcp.CallToolRequest{Params: call.params}
	if !plainCapabilities(meta[mcp.MetaKeyClientCapabilities]) {
		if caps := req.ClientCapabilities(); caps == nil || caps.Elicitation != nil {
			return false
		}
	}
	if info, present := meta[mcp.MetaKeyClientInfo]; present && !plainClientInfo(info) && req.ClientInfo() == nil {
		return false
	}
	return true
}

// plainCapabilities reports whether v, decoded JSON, is client capabilities
// the SDK reads and that declare no elicitation: an object with at most
// roots, whose only member is a boolean listChanged. False says nothing:
// the SDK's own reading decides.
func plainCapabilities(v any) bool {
	caps, ok := v.(map[string]any)
	if !ok {
		return false
	}
	for k, c := range caps {
		roots, ok := c.(map[string]any)
		if k != "roots" || !ok {
			return false
		}
		for rk, rv := range roots {
			if _, ok := rv.(bool); rk != "listChanged" || !ok {
				return false
			}
		}
	}
	return true
}

// plainClientInfo reports whether v, decoded JSON, is client info the SDK
// reads: an object of name, title, version and websiteUrl strings. False
// says nothing: the SDK's own reading decides.
func plainClientInfo(v any) bool {
	info, ok := v.(map[string]any)
	if !ok {
		return false
	}
	for k, e := range info {
		if _, ok := e.(string); !ok || (k != "name" && k != "title" && k != "version" && k != "websiteUrl") {
			return false
		}
	}
	return true
}

// streamableAccepts is the SDK's check of a POST's Accept header: it must
// take both JSON and an event stream.
func streamableAccepts(values []string) (jsonOK, streamOK bool) {
	for _, value := range values {
		for _, raw := range strings.Split(value, ",") {
			base, _, _ := strings.Cut(strings.TrimSpace(raw), ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				streamOK = true
			case "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK, streamOK
}
