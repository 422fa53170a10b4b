package gatewaytest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/pml-go/pml/internal/wire"
)

// RawExecute sends execute to the gateway at url as a plain MCP client of
// protocol version (none: no Mcp-Protocol-Version header, as before
// 2026-07-28) would, one stateless POST without a session, and reads the
// answer; ctx ends the request, as a client that goes away.
func RawExecute(ctx context.Context, url, key, version, code string) (wire.Answer, error) {
	args, err := json.Marshal(wire.ExecuteRequest{Code: code})
	if err != nil {
		return wire.Answer{}, err
	}
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"execute","arguments":%s}}`, args)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/mcp", strings.NewReader(body))
	if err != nil {
		return wire.Answer{}, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if version != "" {
		req.Header.Set("Mcp-Protocol-Version", version)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return wire.Answer{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return wire.Answer{}, err
	}
	a, err := AnswerOf(resp.Header.Get("Content-Type"), raw)
	if err != nil {
		return wire.Answer{}, fmt.Errorf("HTTP %d: %w", resp.StatusCode, err)
	}
	return a, nil
}

// AnswerOf reads execute's answer from the body of an HTTP response to a
// tools/call, plain JSON or an event stream (whose last result it takes),
// for tests that speak HTTP without an MCP client.
func AnswerOf(contentType string, raw []byte) (wire.Answer, error) {
	msg := raw
	if strings.HasPrefix(contentType, "text/event-stream") {
		msg = nil
		sc := bufio.NewScanner(bytes.NewReader(raw))
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok && strings.Contains(data, `"result"`) {
				msg = []byte(data)
			}
		}
	}
	var rpc struct {
		Result struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal(msg, &rpc); err != nil || len(rpc.Result.Content) != 1 {
		return wire.Answer{}, fmt.Errorf("no answer in %q", raw)
	}
	var a wire.Answer
	return a, json.Unmarshal([]byte(rpc.Result.Content[0].Text), &a)
}
