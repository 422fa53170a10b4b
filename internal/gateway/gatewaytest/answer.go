package gatewaytest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/pml-go/pml/internal/wire"
)

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
