package gatewayclient

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/wire"
)

// callTool runs one gateway tool and returns its text.
func (g *Remote) callTool(ctx context.Context, name string, args any) (string, bool, error) {
	s, err := g.connect(ctx)
	if err != nil {
		return "", false, err
	}
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		if ctx.Err() != nil {
			return "", false, ctx.Err()
		}
		if pe, ok := pmlerr.As(err); ok && overloaded(pe) {
			return "", false, pe // the session is fine: the gateway is busy
		}
		g.drop(s)
		return "", false, g.down(err)
	}
	if len(res.Content) == 0 {
		return "", res.IsError, pmlerr.New(pmlerr.NetworkError, "gateway %s: empty answer to %s", g.url, name)
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		return "", res.IsError, pmlerr.New(pmlerr.NetworkError, "gateway %s: %s answered non-text content", g.url, name)
	}
	return text.Text, res.IsError, nil
}

// Execute implements Gateway.
func (g *Remote) Execute(ctx context.Context, req wire.ExecuteRequest) (wire.Answer, error) {
	text, _, err := g.callTool(ctx, "execute", req)
	if err != nil {
		return wire.Answer{}, err
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
