// Command mcpserver is an MCP server for tests. It serves a fixed set of tools
// (see tools.go) whose behaviour is easy to observe from the client side:
// echoes, structured results, delays, crashes, hangs, failures, side-effect
// counters and environment lookups.
//
// By default it speaks MCP over stdin/stdout. With -http ADDR it serves
// Streamable HTTP at /mcp instead and prints its endpoint URL on the first
// line of stdout, so tests can listen on 127.0.0.1:0 and learn the port.
// With -http ADDR -sse it serves the older HTTP+SSE transport at /sse. With
// -auth TOKEN it answers 401 to any HTTP request without that bearer token.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	httpAddr := flag.String("http", "", "serve Streamable HTTP on this address instead of stdio")
	sse := flag.Bool("sse", false, "with -http: serve the HTTP+SSE transport at /sse instead of Streamable HTTP")
	auth := flag.String("auth", "", "with -http: answer 401 to requests without Authorization: Bearer TOKEN")
	pageSize := flag.Int("page-size", 0, "tools/list page size (0: SDK default), to exercise pagination")
	replayFile := flag.String("replay", "", "serve the server saved in this file (a discover500 capture) instead of the fixture's tools")
	protocol := flag.String("protocol", "", "negotiate no protocol version newer than this one (empty: the SDK's newest)")
	flag.Parse()
	var versions []string
	if *protocol != "" {
		for _, v := range mcp.SupportedProtocolVersions() {
			if v <= *protocol {
				versions = append(versions, v)
			}
		}
	}

	// The banner goes to stderr so clients can check that stderr is captured.
	fmt.Fprintf(os.Stderr, "mcpserver: ready pid=%d\n", os.Getpid())

	var server *mcp.Server
	if *replayFile != "" {
		var err error
		if server, err = replay(*replayFile, *pageSize); err != nil {
			fmt.Fprintf(os.Stderr, "mcpserver: %v\n", err)
			os.Exit(1)
		}
	} else {
		server = mcp.NewServer(&mcp.Implementation{Name: "pml-testfixture", Version: "1.0.0"},
			&mcp.ServerOptions{PageSize: *pageSize, SupportedProtocolVersions: versions})
		addTools(server)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	var err error
	if *httpAddr != "" {
		err = serveHTTP(ctx, server, *httpAddr, *sse, *auth)
	} else {
		err = server.Run(ctx, &mcp.StdioTransport{})
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(os.Stderr, "mcpserver: %v\n", err)
		os.Exit(1)
	}
}

func serveHTTP(ctx context.Context, server *mcp.Server, addr string, sse bool, auth string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	mux := http.NewServeMux()
	path := "/mcp"
	if sse {
		path = "/sse"
		mux.Handle(path, mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return server }, nil))
	} else {
		mux.Handle(path, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	}
	var handler http.Handler = mux
	if auth != "" {
		handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer "+auth {
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
			mux.ServeHTTP(w, r)
		})
	}
	hs := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}

	fmt.Printf("http://%s%s\n", ln.Addr(), path)

	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		// Hanging tool calls never finish, so a failed graceful shutdown is expected.
		_ = hs.Shutdown(shutdownCtx)
		return nil
	}
}
