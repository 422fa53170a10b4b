package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/tools"
)

// testTools is an in-process tool set:
//
//	math:add {a,b}        -> a+b
//	test:echo any         -> the arguments
//	test:sleep {ms}       -> "slept", after ms, honoring ctx
//	test:hang             -> never answers, ignoring ctx
//	test:fail {code,msg}  -> *pmlerr.Error with that code
//	test:plain {msg}      -> a plain Go error
//	test:panic            -> panics
//	test:halt             -> a *HaltError
//	test:raw {json}       -> json as the raw result
//	anything else         -> UNKNOWN_TOOL
type testTools struct {
	mu    sync.Mutex
	calls []recordedCall
}

type recordedCall struct {
	tool string
	args string
	seq  int
}

var errApproval = errors.New("approval required")

func (tt *testTools) call(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
	seq, ok := tools.CallSeq(ctx)
	if !ok {
		seq = -1
	}
	tt.mu.Lock()
	tt.calls = append(tt.calls, recordedCall{tool: tool, args: string(args), seq: seq})
	tt.mu.Unlock()
	var a struct {
		A, B float64
		Ms   int
		Code string
		Msg  string
		JSON string
	}
	if err := json.Unmarshal(args, &a); err != nil {
		return nil, fmt.Errorf("bad args %s: %w", args, err)
	}
	switch tool {
	case "math:add":
		return json.RawMessage(strconv.FormatFloat(a.A+a.B, 'g', -1, 64)), nil
	case "test:echo":
		return args, nil
	case "test:sleep":
		select {
		case <-time.After(time.Duration(a.Ms) * time.Millisecond):
			return json.RawMessage(`"slept"`), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	case "test:hang":
		time.Sleep(2 * time.Second) // ignores ctx on purpose
		return json.RawMessage(`"woke"`), nil
	case "test:fail":
		return nil, pmlerr.New(pmlerr.Code(a.Code), "%s", a.Msg).With("declaration", "mcp.test.fail(args: { code: string; msg: string })").With("available", []string{"test:fail"})
	case "test:plain":
		return nil, errors.New(a.Msg)
	case "test:panic":
		panic("handler exploded")
	case "test:halt":
		return nil, fmt.Errorf("pause: %w", &HaltError{Err: errApproval})
	case "test:raw":
		return json.RawMessage(a.JSON), nil
	}
	return nil, pmlerr.New(pmlerr.UnknownTool, "unknown tool %s", tool)
}

func (tt *testTools) recorded() []recordedCall {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	return append([]recordedCall(nil), tt.calls...)
}

// fn wraps a function body the way internal/analysis does.
func fn(body string) string {
	return "(async function (args) {\n" + body + "\n})"
}

// testLimits are small, so hostile code fails fast.
func testLimits() Limits {
	return Limits{MemoryBytes: 4 << 20, Timeout: 20 * time.Second, RPCTimeout: time.Second}
}

func runBody(t *testing.T, body string) (Result, error) {
	t.Helper()
	tt := &testTools{}
	return Run(context.Background(), fn(body), nil, tt.call, testLimits())
}

// mustRun runs body and returns its JSON result.
func mustRun(t *testing.T, body string) string {
	t.Helper()
	res, err := runBody(t, body)
	if err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	return string(res.Value)
}

// wantCode asserts err is a *pmlerr.Error with code and returns it.
func wantCode(t *testing.T, err error, code pmlerr.Code) *pmlerr.Error {
	t.Helper()
	pe, ok := pmlerr.As(err)
	if !ok {
		t.Fatalf("got error %v (%T), want %s", err, err, code)
	}
	if pe.Code != code {
		t.Fatalf("got %s (%s, details %v), want %s", pe.Code, pe.Message, pe.Details, code)
	}
	return pe
}

// rssBytes reads the resident set size of this process.
func rssBytes(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		t.Skipf("no /proc/self/statm: %v", err)
	}
	f := strings.Fields(string(b))
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return pages * int64(os.Getpagesize())
}

// peakRSSBytes reads the peak resident set size (VmHWM) of this process.
func peakRSSBytes(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Skip("no VmHWM")
	return 0
}
