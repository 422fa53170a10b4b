package gatewayclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/wire"
)

// executePlain sends req to the gateway's POST /api/v1/execute
// (docs/protocol.md "Plain execute"): one JSON request and its answer,
// without the MCP client's framing, goroutines and double decoding, which
// were about a quarter of the hybrid path's hop (docs/performance.md "The hybrid
// path"). The transport adds the key and the package's headers and makes
// the gateway's 401/403, 429 and 503 draining what they are over MCP.
//
// served is false when the gateway answers 404, as one older than the
// endpoint does: this Remote then sends every execute over MCP.
func (g *Remote) executePlain(ctx context.Context, req wire.ExecuteRequest, traceID string, start time.Time) (a wire.Answer, served bool, err error) {
	if err := g.unreachable(); err != nil {
		return wire.Answer{}, true, err
	}
	body, err := json.Marshal(wire.ExecuteCall{ExecuteRequest: req, TraceID: traceID})
	if err != nil {
		return wire.Answer{}, true, fmt.Errorf("encode the execute request: %w", err)
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, g.url+wire.ExecutePath, bytes.NewReader(body))
	if err != nil {
		return wire.Answer{}, true, fmt.Errorf("execute request: %w", err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	resp, err := g.http.Do(hreq)
	if err != nil {
		if ctx.Err() != nil {
			a, err := ended(ctx, start, traceID)
			return a, true, err
		}
		return wire.Answer{}, true, g.down(err)
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotFound:
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		g.noPlainExecute.Store(true)
		return wire.Answer{}, false, nil
	default:
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		return wire.Answer{}, true, pmlerr.New(pmlerr.NetworkError, "gateway %s: execute: HTTP %d: %s", g.url, resp.StatusCode, bytes.TrimSpace(msg))
	}
	data, err := readAnswer(resp)
	if err != nil {
		if ctx.Err() != nil {
			a, err := ended(ctx, start, traceID)
			return a, true, err
		}
		return wire.Answer{}, true, g.networkError(err)
	}
	if a, err = decodeAnswer(data); err != nil {
		return wire.Answer{}, true, pmlerr.New(pmlerr.NetworkError, "gateway %s: undecodable execute answer: %v", g.url, err)
	}
	return a, true, nil
}

// decodeAnswer is json.Unmarshal of an execute answer into a wire.Answer.
// The plain endpoint's execute_locally answer, every answer of the hybrid
// path's hop, is read without encoding/json when it is exactly what the
// gateway writes (wire.LocalAnswer's JSON: those fields in that order,
// their values of plain characters, no space): such bytes can only mean
// that, and encoding/json's three passes of wire.Answer took ~10 µs of the
// hop (docs/performance.md "The hybrid path"). Any other answer goes to
// encoding/json (TestDecodeAnswerIsUnmarshal).
func decodeAnswer(data []byte) (wire.Answer, error) {
	if l, ok := plainLocalAnswer(data); ok {
		return l.Answer(), nil
	}
	var a wire.Answer
	err := json.Unmarshal(data, &a)
	return a, err
}

// plainLocalAnswer reads data as wire.LocalAnswer's JSON
// {"status":"execute_locally","workflow_id":"…","code_hash":"…"}, either
// of the last two absent, their values of letters, digits, '-', '_' and
// '.' only; ok is false for anything else.
func plainLocalAnswer(data []byte) (l wire.LocalAnswer, ok bool) {
	rest, found := bytes.CutPrefix(data, []byte(`{"status":"execute_locally"`))
	if !found {
		return l, false
	}
	l.Status = wire.StatusExecuteLocally
	if rest, found = bytes.CutPrefix(rest, []byte(`,"workflow_id":"`)); found {
		if l.WorkflowID, rest, ok = plainString(rest); !ok || l.WorkflowID == "" {
			return l, false
		}
	}
	if rest, found = bytes.CutPrefix(rest, []byte(`,"code_hash":"`)); found {
		if l.CodeHash, rest, ok = plainString(rest); !ok || l.CodeHash == "" {
			return l, false
		}
	}
	return l, string(rest) == "}"
}

// plainString reads a JSON string's characters up to its closing quote,
// when each is one that JSON writes as itself and means nothing else.
func plainString(b []byte) (s string, rest []byte, ok bool) {
	for i, c := range b {
		switch {
		case c == '"':
			return string(b[:i]), b[i+1:], true
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_', c == '.':
		default:
			return "", nil, false
		}
	}
	return "", nil, false
}

// ended is the outcome of an execute whose ctx ended before its answer:
// CANCELLED under traceID when the caller cancelled it, else ctx's error.
func ended(ctx context.Context, start time.Time, traceID string) (wire.Answer, error) {
	if errors.Is(ctx.Err(), context.Canceled) {
		return cancelled(start, traceID), nil
	}
	return wire.Answer{}, ctx.Err()
}

// readAnswer reads an answer's body whole, in one allocation when its length
// is announced. An execute answer is not bounded here: its result is, by the
// gateway's limits (docs/limits.md).
func readAnswer(resp *http.Response) ([]byte, error) {
	if n := resp.ContentLength; n > 0 && n <= maxExecuteAnswerHint {
		data := make([]byte, n)
		_, err := io.ReadFull(resp.Body, data)
		return data, err
	}
	return io.ReadAll(resp.Body)
}

// maxExecuteAnswerHint is the largest announced length readAnswer allocates
// at once; a longer answer grows its buffer as it arrives.
const maxExecuteAnswerHint = 1 << 20
