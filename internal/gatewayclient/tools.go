package gatewayclient

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/tracing"
	"github.com/pml-go/pml/internal/wire"
)

// callTool runs one gateway tool and returns its text.
func (g *Remote) callTool(ctx context.Context, name string, args any) (string, bool, error) {
	text, res, err := g.callParams(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return "", false, err
	}
	return text, res.IsError, nil
}

// callParams runs the gateway tool params names and returns the text of
// its answer and the whole result.
func (g *Remote) callParams(ctx context.Context, params *mcp.CallToolParams) (string, *mcp.CallToolResult, error) {
	s, err := g.connect(ctx)
	if err != nil {
		return "", nil, err
	}
	res, err := s.CallTool(ctx, params)
	if err != nil {
		if ctx.Err() != nil {
			return "", nil, ctx.Err()
		}
		if pe, ok := pmlerr.As(err); ok && overloaded(pe) {
			return "", nil, pe // the session is fine: the gateway is busy
		}
		g.drop(s)
		return "", nil, g.down(err)
	}
	if len(res.Content) == 0 {
		return "", nil, pmlerr.New(pmlerr.NetworkError, "gateway %s: empty answer to %s", g.url, params.Name)
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		return "", nil, pmlerr.New(pmlerr.NetworkError, "gateway %s: %s answered non-text content", g.url, params.Name)
	}
	return text.Text, res, nil
}

// Execute implements Gateway. The call asks the gateway to record a run it
// makes under a fresh trace id of the package's. When ctx is cancelled
// (Ctrl-C on `pml exec`) the request ends without an answer, the gateway
// cancels the run and keeps its trace; the answer is then CANCELLED with that
// trace id, as a run cancelled here is (README "Commands").
//
// The request goes as plain JSON to POST /api/v1/execute (executePlain), and
// over MCP (executeMCP) when it asks for progress, which only MCP's
// notifications carry, or when the gateway predates that endpoint.
func (g *Remote) Execute(ctx context.Context, req wire.ExecuteRequest) (wire.Answer, error) {
	start := time.Now()
	traceID := tracing.NewTraceID()
	if wire.ProgressFrom(ctx) == nil && !g.noPlainExecute.Load() {
		if a, served, err := g.executePlain(ctx, req, traceID, start); served {
			return a, err
		}
	}
	return g.executeMCP(ctx, req, traceID, start)
}

// executeMCP is Execute as an MCP tools/call, the way for a request that
// asks for progress (wire.ProgressFrom) and for a gateway without
// POST /api/v1/execute. With progress, the gateway is sent a progress token
// of this package's and its notifications for the run are forwarded to the
// request. An answer of execute_locally comes with none: the run that
// follows here reports its own calls, the gateway's calls among them. The
// trace id goes in the call's _meta (wire.TraceIDMeta).
func (g *Remote) executeMCP(ctx context.Context, req wire.ExecuteRequest, traceID string, start time.Time) (wire.Answer, error) {
	params := &mcp.CallToolParams{Name: "execute", Arguments: req}
	if _, err := g.connect(ctx); err != nil {
		if errors.Is(ctx.Err(), context.Canceled) {
			return cancelled(start, ""), nil // nothing reached the gateway
		}
		return wire.Answer{}, err
	}
	params.SetMeta(map[string]any{wire.TraceIDMeta: traceID})
	var rel *relayed
	if p := wire.ProgressFrom(ctx); p != nil {
		var token string
		var closeRelay func()
		token, rel, closeRelay = g.progress.open(ctx, p)
		defer closeRelay()
		params.SetProgressToken(token)
	}
	text, res, err := g.callParams(ctx, params)
	if err != nil {
		if errors.Is(ctx.Err(), context.Canceled) {
			return cancelled(start, traceID), nil
		}
		return wire.Answer{}, err
	}
	if rel != nil {
		rel.drain(ctx, res.Meta)
	}
	var a wire.Answer
	if err := json.Unmarshal([]byte(text), &a); err != nil {
		return wire.Answer{}, pmlerr.New(pmlerr.NetworkError, "gateway %s: undecodable execute answer: %v", g.url, err)
	}
	return a, nil
}

// Call implements Gateway.
func (g *Remote) Call(ctx context.Context, req wire.CallRequest) (json.RawMessage, error) {
	text, isErr, err := g.callTool(ctx, "call", req)
	if err != nil {
		return nil, err
	}
	if isErr {
		return nil, answerError(text)
	}
	return json.RawMessage(text), nil
}

// Discover implements Gateway.
func (g *Remote) Discover(ctx context.Context, req wire.DiscoverRequest) (wire.DiscoverAnswer, error) {
	var out wire.DiscoverAnswer
	text, isErr, err := g.callTool(ctx, "discover", req)
	if err != nil {
		return out, err
	}
	if isErr {
		return out, answerError(text)
	}
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		return out, pmlerr.New(pmlerr.NetworkError, "gateway %s: undecodable discover answer: %v", g.url, err)
	}
	return out, nil
}

// cancelled is the answer to an execute its caller cancelled after the
// time since start: CANCELLED, with the trace id the gateway keeps the run
// under ("" when the request never reached it).
func cancelled(start time.Time, traceID string) wire.Answer {
	a := wire.ErrorAnswer(pmlerr.New(pmlerr.Cancelled, "execution cancelled by the caller after %s", time.Since(start).Round(time.Millisecond)), "")
	a.TraceID = traceID
	return a
}

func answerError(text string) error {
	var a wire.Answer
	if err := json.Unmarshal([]byte(text), &a); err != nil || a.Status != wire.StatusError {
		return pmlerr.New(pmlerr.ToolError, "%s", text)
	}
	return a.Err()
}

// Admin implements Gateway.
func (g *Remote) Admin(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	text, isErr, err := g.callTool(ctx, "admin", args)
	if err != nil {
		return nil, err
	}
	if isErr {
		return nil, answerError(text)
	}
	return json.RawMessage(text), nil
}
