package mcpdirect

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/wire"
)

// EncodeResult writes what the SDK writes, decoded, for every shape of tool
// result; encodeTextResult takes exactly the text-and-structured ones.
func TestEncodeTextResult(t *testing.T) {
	answer := json.RawMessage(`{"status":"success","result":"<a & b>\u2028 é \"q\"","logs":[]}`)
	text := func(s string) []mcp.Content { return []mcp.Content{&mcp.TextContent{Text: s}} }
	// A result of a session of MCP 2026-07-28 carries resultType, which
	// only the SDK can set: decoding one is the way to have it.
	typed := &mcp.CallToolResult{}
	if err := json.Unmarshal([]byte(`{"content":[],"resultType":"complete"}`), typed); err != nil {
		t.Fatal(err)
	}
	typed.Content, typed.StructuredContent = text(string(answer)), answer
	// SetError keeps the error in a field the encoding leaves out.
	withErr := &mcp.CallToolResult{Content: text(string(answer)), StructuredContent: answer}
	withErr.SetError(errors.New("failed"))

	cases := []struct {
		name string
		res  *mcp.CallToolResult
		fast bool
	}{
		{"answer", &mcp.CallToolResult{Content: text(string(answer)), StructuredContent: answer}, true},
		{"error answer", &mcp.CallToolResult{Content: text(string(answer)), StructuredContent: answer, IsError: true}, true},
		{"text only", &mcp.CallToolResult{Content: text("plain <text>\n\t\x01 \xff")}, true},
		{"empty text", &mcp.CallToolResult{Content: text("")}, true},
		{"meta", &mcp.CallToolResult{Meta: mcp.Meta{"k": "<v>", "n": 1}, Content: text("x"), StructuredContent: answer}, true},
		{"resultType", typed, true},
		{"SetError", withErr, true},
		{"request state", &mcp.CallToolResult{Content: text("x"), RequestState: "s"}, true},
		{"no content", &mcp.CallToolResult{}, false},
		{"two items", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "a"}, &mcp.TextContent{Text: "b"}}}, false},
		{"image", &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: []byte("x"), MIMEType: "image/png"}}}, false},
		{"text meta", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "a", Meta: mcp.Meta{"m": 1}}}}, false},
		{"annotated", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "a", Annotations: &mcp.Annotations{Priority: 1}}}}, false},
		{"structured map", &mcp.CallToolResult{Content: text("x"), StructuredContent: map[string]any{"a": 1}}, false},
		{"structured invalid", &mcp.CallToolResult{Content: text("x"), StructuredContent: json.RawMessage(`{"a":`)}, false},
		{"structured indented", &mcp.CallToolResult{Content: text("x"), StructuredContent: json.RawMessage("{\n  \"a\": 1\n}")}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, fast := encodeTextResult(c.res); fast != c.fast {
				t.Fatalf("taken by the fast encoding: %v, want %v", fast, c.fast)
			}
			encodesAsTheSDK(t, c.res)
		})
	}
}

// encodesAsTheSDK checks that EncodeResult writes res as the SDK does,
// decoded, on one line, or fails where the SDK fails.
func encodesAsTheSDK(t *testing.T, res *mcp.CallToolResult) {
	t.Helper()
	want, sdkErr := res.MarshalJSON()
	got, err := EncodeResult(res)
	if sdkErr != nil || err != nil {
		if sdkErr == nil || err == nil {
			t.Fatalf("error %v, the SDK's %v", err, sdkErr)
		}
		return
	}
	if bytes.ContainsAny(got, "\r\n") {
		t.Fatalf("a line break in %q", got)
	}
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%q: %v", got, err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("encoded\n %q\nthe SDK\n %q", got, want)
	}
}

// FuzzEncodeTextResult: for any text and structured content, EncodeResult
// writes what the SDK writes, decoded, on one line, or fails where the SDK
// fails.
func FuzzEncodeTextResult(f *testing.F) {
	f.Add("Echo: one", []byte(`{"status":"success","result":["a"]}`), false)
	f.Add("<&>\u2028\x00\xff", []byte(`"<&>\u2028"`), true)
	f.Add("", []byte(`{"a":`), false)
	f.Add("x", []byte("[1,\n2]"), false)
	f.Add("x", []byte(" {} "), false)
	f.Fuzz(func(t *testing.T, text string, structured []byte, isError bool) {
		res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: isError}
		if structured != nil {
			res.StructuredContent = json.RawMessage(structured)
		}
		encodesAsTheSDK(t, res)
	})
}

// BenchmarkEncodeAnswer is the encoding of the benchmark snippet's answer
// (docs/performance.md "The trace after the answer"), by EncodeResult and
// by the SDK's own encoding.
func BenchmarkEncodeAnswer(b *testing.B) {
	res := wire.AnswerResult(wire.Answer{
		Status: wire.StatusSuccess, Result: json.RawMessage(`["Echo: one","Echo: two","Echo: three"]`),
		ExecutedLocally: wire.Bool(true), WorkflowID: "0d5b6c1e-6f5e-4c43-9d53-2f3c1b8a7e21",
		TraceID: "019ad0b3c2a47e1f9a0b6c5d4e3f2a1b", ToolsUsed: wire.ToolIDs([]string{"everything:echo"}),
		DurationMS: wire.Float(0.62), Logs: []string{},
	})
	for _, enc := range []struct {
		name string
		fn   func() ([]byte, error)
	}{
		{"direct", func() ([]byte, error) { return EncodeResult(res) }},
		{"sdk", res.MarshalJSON},
	} {
		b.Run(enc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := enc.fn(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
