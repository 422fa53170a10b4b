package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/rawjson"
	"github.com/pml-go/pml/internal/tools"
)

// Tools lists the server's tools (all pages), starting it if needed. The
// list is cached for as long as the session lives.
func (s *Server) Tools(ctx context.Context) ([]tools.Info, error) {
	ss, err := s.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer s.release(ss)
	list, err := s.listTools(ctx, ss)
	if err != nil {
		return nil, s.sessionError(ctx, ss, "listing the tools of MCP server "+s.name, err)
	}
	return slices.Clone(list), nil
}

func (s *Server) listTools(ctx context.Context, ss *session) ([]tools.Info, error) {
	s.mu.Lock()
	cached := ss.tools
	s.mu.Unlock()
	if cached != nil {
		return cached, nil
	}
	list := []tools.Info{}
	if ir := ss.cs.InitializeResult(); ir != nil && ir.Capabilities != nil && ir.Capabilities.Tools == nil {
		// A server without the tools capability has none; asking would fail.
		return list, nil
	}
	server := serverText(ss.cs.InitializeResult())
	for t, err := range ss.cs.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		info := tools.Info{ID: s.name + ":" + t.Name, Description: t.Description, Server: server}
		if t.InputSchema != nil {
			if info.InputSchema, err = json.Marshal(t.InputSchema); err != nil {
				return nil, fmt.Errorf("input schema of %s: %w", info.ID, err)
			}
		}
		if t.OutputSchema != nil {
			if info.OutputSchema, err = json.Marshal(t.OutputSchema); err != nil {
				return nil, fmt.Errorf("output schema of %s: %w", info.ID, err)
			}
		}
		list = append(list, info)
	}
	s.mu.Lock()
	ss.tools, s.known = list, list
	s.mu.Unlock()
	if s.pool.opts.OnTools != nil {
		s.pool.opts.OnTools(s.name, slices.Clone(list))
	}
	return list, nil
}

// serverText is what the server said of itself in initialize, which
// discover ranks its tools with (tools.Info.Server).
func serverText(ir *mcp.InitializeResult) string {
	if ir == nil {
		return ""
	}
	var name, title, description string
	if ir.ServerInfo != nil {
		name, title, description = ir.ServerInfo.Name, ir.ServerInfo.Title, ir.ServerInfo.Description
	}
	return tools.ServerText(name, title, description, ir.Instructions)
}

// Call calls tool (an action name, or the full "name:action" id) with args,
// a JSON object, and converts the result (docs/protocol.md "Tool results").
// Concurrent calls share one session.
func (s *Server) Call(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
	action := strings.TrimPrefix(tool, s.name+":")
	id := s.name + ":" + action
	arguments := json.RawMessage(`{}`)
	if trimmed := bytes.TrimSpace(args); len(trimmed) > 0 && !bytes.Equal(trimmed, []byte("null")) {
		compact, ok := rawjson.Compact(nil, trimmed)
		if trimmed[0] != '{' || !ok {
			return nil, pmlerr.New(pmlerr.InvalidRequest, "arguments of %s must be a JSON object", id).With("tool", id)
		}
		arguments = compact
	}

	ss, err := s.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer s.release(ss)

	var res *mcp.CallToolResult
	if ss.direct != nil {
		var out json.RawMessage
		if out, res, err = callDirect(ctx, ss.direct, action, arguments); err == nil && res == nil {
			return out, nil
		}
	} else {
		res, err = ss.cs.CallTool(ctx, &mcp.CallToolParams{Name: action, Arguments: arguments})
	}
	if err != nil {
		var rpcErr *jsonrpc.Error
		if errors.As(err, &rpcErr) && s.isUnknown(ctx, ss, action) {
			return nil, s.unknownTool(ctx, ss, id)
		}
		if rpcErr != nil { // the server answered: it may have refused the arguments
			if invalid := s.invalidArgs(ctx, ss, id, args, err); invalid != nil {
				return nil, invalid
			}
		}
		return nil, s.sessionError(ctx, ss, "calling "+id, err)
	}
	if res.IsError && s.isUnknown(ctx, ss, action) {
		return nil, s.unknownTool(ctx, ss, id)
	}
	out, err := convertResult(id, res)
	if err != nil {
		if invalid := s.invalidArgs(ctx, ss, id, args, err); invalid != nil {
			return nil, invalid
		}
	}
	return out, err
}

// invalidArgs is the error of a failed call whose arguments do not match
// the tool's input schema, with the tool's declaration so the AI client can
// fix its call without another discover (docs/protocol.md "Error"); nil
// when they match, or when the schema is unknown or does not compile. The
// server decided the call failed; this only says why in a form the client
// can act on, keeping the server's own error as the cause.
func (s *Server) invalidArgs(ctx context.Context, ss *session, id string, args json.RawMessage, cause error) error {
	list, err := s.listTools(ctx, ss)
	if err != nil {
		return nil
	}
	i := slices.IndexFunc(list, func(t tools.Info) bool { return t.ID == id })
	if i < 0 {
		return nil
	}
	pe, ok := pmlerr.As(s.validator.Validate(list[i].InputSchema, args))
	if !ok {
		return nil
	}
	e := pmlerr.New(pmlerr.ToolError, "%s: %s", id, pe.Message).
		With("tool", id).With("declaration", tools.CompactDeclaration(list[i]))
	e.Err = cause
	return e
}

// isUnknown reports whether the server does not list action. Servers report
// unknown tools in different ways (a JSON-RPC error, an isError result), so
// after a failure the tool list decides. A failing list counts as known:
// the original error is more useful then.
func (s *Server) isUnknown(ctx context.Context, ss *session, action string) bool {
	list, err := s.listTools(ctx, ss)
	if err != nil {
		return false
	}
	return !slices.ContainsFunc(list, func(t tools.Info) bool { return t.ID == s.name+":"+action })
}

func (s *Server) unknownTool(ctx context.Context, ss *session, id string) error {
	list, _ := s.listTools(ctx, ss)
	names := make([]string, len(list))
	for i, t := range list {
		names[i] = t.ID
	}
	return pmlerr.New(pmlerr.UnknownTool, "unknown tool %s: MCP server %s has no such tool", id, s.name).
		With("tool", id).With("available", names)
}

// deathWait bounds how long a failed call waits to learn whether the session
// died: the transport error arrives first, the watcher's verdict just after.
const deathWait = 2 * time.Second

// sessionError explains a failed request on ss: the caller's deadline, the
// server's death (crash, stop), or a protocol error.
func (s *Server) sessionError(ctx context.Context, ss *session, what string, err error) error {
	if ctx.Err() != nil {
		return ctxError(ctx, what)
	}
	if unauthorized(err) {
		// The session's token is refused: end the session so the next call
		// reconnects with whatever token `pml connect` stored since.
		ss.markDead(err)
		return &pmlerr.Error{Code: pmlerr.Unauthorized, Err: err, Message: what + ": " + pmlerr.Message(err),
			Details: map[string]any{"server": s.name}}
	}
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) {
		// The server answered, so it is alive.
		return s.toolError("%s: MCP server %s answered: %s", what, s.name, rpcErr.Message)
	}
	t := time.NewTimer(deathWait)
	defer t.Stop()
	select {
	case <-ss.dead:
	case <-t.C:
		// Alive but the transport failed: a broken session is no use, so end
		// it and let the next call start afresh.
		ss.markDead(fmt.Errorf("MCP server %s: connection failed: %w", s.name, err))
	case <-ctx.Done():
		return ctxError(ctx, what)
	}
	return &pmlerr.Error{Code: pmlerr.ToolError, Message: ss.deadErr.Error(), Err: ss.deadErr,
		Details: map[string]any{"server": s.name}}
}
