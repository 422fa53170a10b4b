package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// crashExitCode is the status the crash tool exits with, so tests can
// recognise it in error messages.
const crashExitCode = 3

type textArgs struct {
	Text string `json:"text"`
}

type addArgs struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

type sumResult struct {
	Sum float64 `json:"sum"`
}

type sleepArgs struct {
	Ms int `json:"ms"`
	// Started and Cancelled, when set, are files the tool appends a line to
	// when it starts sleeping and when its call is cancelled, so a test can
	// cancel a call under way and see the cancellation reach the server.
	Started   string `json:"started,omitempty"`
	Cancelled string `json:"cancelled,omitempty"`
}

type barrierArgs struct {
	N int `json:"n"`
}

// barrier answers calls only once n of them wait at once, then starts over:
// a benchmark proves with it that a gateway holds n calls at the same time.
type barrier struct {
	mu      sync.Mutex
	waiting int
	open    chan struct{}
}

func (b *barrier) wait(ctx context.Context, n int) error {
	b.mu.Lock()
	if b.open == nil {
		b.open = make(chan struct{})
	}
	open := b.open
	b.waiting++
	if b.waiting >= n {
		close(open)
		b.open, b.waiting = make(chan struct{}), 0
	}
	b.mu.Unlock()
	select {
	case <-open:
		return nil
	case <-ctx.Done():
		b.mu.Lock()
		if b.open == open {
			b.waiting--
		}
		b.mu.Unlock()
		return ctx.Err()
	}
}

type messageArgs struct {
	Message string `json:"message"`
}

type fileArgs struct {
	File string `json:"file"`
}

type nameArgs struct {
	Name string `json:"name"`
}

type noArgs struct{}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func addTools(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "returns text"},
		func(_ context.Context, _ *mcp.CallToolRequest, in textArgs) (*mcp.CallToolResult, any, error) {
			return text(in.Text), nil, nil
		})

	// The text content deliberately differs from the structured content, so a
	// client that wrongly prefers the text is caught.
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "returns structuredContent {sum}"},
		func(_ context.Context, _ *mcp.CallToolRequest, in addArgs) (*mcp.CallToolResult, sumResult, error) {
			sum := in.A + in.B
			return text(fmt.Sprintf("the sum is %g", sum)), sumResult{Sum: sum}, nil
		})

	mcp.AddTool(s, &mcp.Tool{Name: "sleep", Description: "sleeps ms milliseconds, then returns \"slept\"; appends a line to the file started names as it starts, to the one cancelled names when cancelled"},
		func(ctx context.Context, _ *mcp.CallToolRequest, in sleepArgs) (*mcp.CallToolResult, any, error) {
			if in.Started != "" {
				if _, err := appendCount(in.Started); err != nil {
					return nil, nil, err
				}
			}
			select {
			case <-time.After(time.Duration(in.Ms) * time.Millisecond):
				return text("slept"), nil, nil
			case <-ctx.Done():
				if in.Cancelled != "" {
					if _, err := appendCount(in.Cancelled); err != nil {
						return nil, nil, err
					}
				}
				return nil, nil, ctx.Err()
			}
		})

	var bar barrier
	mcp.AddTool(s, &mcp.Tool{Name: "barrier", Description: "returns \"released\" once n calls wait in it at the same time"},
		func(ctx context.Context, _ *mcp.CallToolRequest, in barrierArgs) (*mcp.CallToolResult, any, error) {
			if err := bar.wait(ctx, in.N); err != nil {
				return nil, nil, err
			}
			return text(`"released"`), nil, nil
		})

	mcp.AddTool(s, &mcp.Tool{Name: "crash", Description: "exits the process mid-call"},
		func(context.Context, *mcp.CallToolRequest, noArgs) (*mcp.CallToolResult, any, error) {
			fmt.Fprintln(os.Stderr, "mcpserver: crashing on purpose")
			os.Exit(crashExitCode)
			return nil, nil, nil
		})

	// hang ignores cancellation too: it models a server that is stuck, which
	// only signals can end.
	mcp.AddTool(s, &mcp.Tool{Name: "hang", Description: "never answers"},
		func(context.Context, *mcp.CallToolRequest, noArgs) (*mcp.CallToolResult, any, error) {
			for {
				time.Sleep(time.Hour)
			}
		})

	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "returns isError with message"},
		func(_ context.Context, _ *mcp.CallToolRequest, in messageArgs) (*mcp.CallToolResult, any, error) {
			return nil, nil, errors.New(in.Message)
		})

	mcp.AddTool(s, &mcp.Tool{Name: "count", Description: "appends a line to file and returns the line count"},
		func(_ context.Context, _ *mcp.CallToolRequest, in fileArgs) (*mcp.CallToolResult, any, error) {
			n, err := appendCount(in.File)
			if err != nil {
				return nil, nil, err
			}
			return text(fmt.Sprint(n)), nil, nil
		})

	mcp.AddTool(s, &mcp.Tool{Name: "json", Description: "returns a text item holding a JSON object"},
		func(context.Context, *mcp.CallToolRequest, noArgs) (*mcp.CallToolResult, any, error) {
			return text(`{"ok":true,"n":42,"items":["a","b"]}`), nil, nil
		})

	mcp.AddTool(s, &mcp.Tool{Name: "env", Description: "returns the value of an environment variable"},
		func(_ context.Context, _ *mcp.CallToolRequest, in nameArgs) (*mcp.CallToolResult, any, error) {
			return text(os.Getenv(in.Name)), nil, nil
		})

	mcp.AddTool(s, &mcp.Tool{Name: "pid", Description: "returns the server's process id"},
		func(context.Context, *mcp.CallToolRequest, noArgs) (*mcp.CallToolResult, any, error) {
			return text(fmt.Sprint(os.Getpid())), nil, nil
		})

	mcp.AddTool(s, &mcp.Tool{Name: "cwd", Description: "returns the server's working directory"},
		func(context.Context, *mcp.CallToolRequest, noArgs) (*mcp.CallToolResult, any, error) {
			dir, err := os.Getwd()
			return text(dir), nil, err
		})

	mcp.AddTool(s, &mcp.Tool{Name: "log", Description: "writes text as one line to stderr"},
		func(_ context.Context, _ *mcp.CallToolRequest, in textArgs) (*mcp.CallToolResult, any, error) {
			fmt.Fprintln(os.Stderr, in.Text)
			return text("logged"), nil, nil
		})

	mcp.AddTool(s, &mcp.Tool{Name: "multi", Description: "returns two text items"},
		func(context.Context, *mcp.CallToolRequest, noArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "first"},
				&mcp.TextContent{Text: "second"},
			}}, nil, nil
		})

	mcp.AddTool(s, &mcp.Tool{Name: "header", Description: "returns an HTTP request header (http mode only)"},
		func(_ context.Context, req *mcp.CallToolRequest, in nameArgs) (*mcp.CallToolResult, any, error) {
			if req.Extra == nil || req.Extra.Header == nil {
				return nil, nil, errors.New("not serving over HTTP")
			}
			return text(req.Extra.Header.Get(in.Name)), nil, nil
		})
}

// appendCount appends one line to file and returns how many lines it holds.
// O_APPEND keeps concurrent appends from different processes whole.
func appendCount(file string) (int, error) {
	f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return 0, fmt.Errorf("open counter: %w", err)
	}
	if _, err := f.WriteString("x\n"); err != nil {
		f.Close()
		return 0, fmt.Errorf("append counter: %w", err)
	}
	if err := f.Close(); err != nil {
		return 0, fmt.Errorf("close counter: %w", err)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return 0, fmt.Errorf("read counter: %w", err)
	}
	return bytes.Count(data, []byte("\n")), nil
}
