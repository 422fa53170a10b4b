package stdioconn

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// benchLines are an echo call's answer and an execute request, as they
// cross stdio on issue 42's path (docs/performance.md "What code mode costs
// over a direct call").
var benchLines = map[string][]byte{
	"response": []byte(`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"Echo: one"}]}}`),
	"request": []byte(`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"execute","arguments":{"code":` +
		`"const r0 = await mcp.everything.echo({message: \"one\"});\nreturn [r0];"}}}`),
}

// BenchmarkDecode: one message decoded by decodeValid (what the reading
// goroutine runs), by decode, and by the SDK's jsonrpc.DecodeMessage (which
// its IOTransport runs after trying the line as a batch).
func BenchmarkDecode(b *testing.B) {
	for name, line := range benchLines {
		b.Run(name+"/valid", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := decodeValid(line); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/stdioconn", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := decode(line); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/sdk", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := jsonrpc.DecodeMessage(line); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
