package mcpdirect

import (
	"bufio"
	"context"
	"io"
	"testing"

	"github.com/pml-go/pml/internal/stdioconn"
)

// BenchmarkStdioCall is one tools/call of a tool that echoes, over a pipe
// pair, the session served by the SDK alone and with the direct path: what
// the direct path saves of the server's work per call
// (docs/performance.md "What code mode costs over a direct call").
func BenchmarkStdioCall(b *testing.B) {
	for _, direct := range []bool{false, true} {
		name := map[bool]string{false: "sdk", true: "direct"}[direct]
		b.Run(name, func(b *testing.B) {
			srv := testServer(nil, nil)
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			conn := stdioconn.NewServer(inR, outW, 0)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				if direct {
					done <- serveStdio(ctx, srv, conn, nil)
				} else {
					done <- srv.Run(ctx, stdioconn.Transport{Conn: conn})
				}
			}()
			out := bufio.NewReader(outR)
			send := func(line string) {
				if _, err := io.WriteString(inW, line+"\n"); err != nil {
					b.Fatal(err)
				}
			}
			recv := func() {
				if _, err := out.ReadBytes('\n'); err != nil {
					b.Fatal(err)
				}
			}
			send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
			recv()
			send(`{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`)
			call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`
			b.ReportAllocs()
			for b.Loop() {
				send(call)
				recv()
			}
			b.StopTimer()
			_ = inW.Close()
			cancel()
			go func() { _, _ = io.Copy(io.Discard, outR) }()
			<-done
		})
	}
}
