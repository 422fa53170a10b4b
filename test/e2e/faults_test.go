//go:build linux

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/testfixture"
	"github.com/pml-go/pml/internal/wire"
)

// Fault cases of `pml stdio`: each sends the bad input, checks the error
// code, and checks that the next request is served.

// prompt is how long a failure may take to surface: generous for a loaded
// CI machine, far below the minutes a hang would take.
const prompt = 3 * time.Second

type callResult struct {
	res *mcp.CallToolResult
	err error
}

// goExecute starts an execute in the background (t.Fatal is not allowed
// off the test goroutine, so the caller checks the result).
func goExecute(s *mcp.ClientSession, code string) <-chan callResult {
	ch := make(chan callResult, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		defer cancel()
		res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "execute", Arguments: wire.ExecuteRequest{Code: code}})
		ch <- callResult{res, err}
	}()
	return ch
}

// waitFor polls cond until it holds or d passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func fixtureWorkspace(t *testing.T) string {
	return testfixture.Workspace(t, map[string]any{"fx": map[string]any{"command": testfixture.BuildServer(t)}})
}

// A local server that crashes mid-call fails that call with TOOL_ERROR (an
// exception the code can catch); the next call gets a fresh process.
func TestStdioLocalServerCrashMidCall(t *testing.T) {
	g := startGateway(t, gateway.Options{})
	p := startStdio(t, fixtureWorkspace(t), gatewayEnv(g))

	var before int
	wantLocal(t, p.execute(t, `return await mcp.fx.pid({})`), &before)
	start := time.Now()
	wantError(t, p.execute(t, `await mcp.fx.crash({}); return "unreachable"`), "TOOL_ERROR", "fx")
	if d := time.Since(start); d > prompt {
		t.Fatalf("the crash took %v to surface", d)
	}
	var msg string
	wantLocal(t, p.execute(t, `try { await mcp.fx.crash({}); return "no" } catch (e) { return "caught: " + e.message }`), &msg)
	if len(msg) < 8 || msg[:8] != "caught: " {
		t.Fatalf("the code did not catch the crash: %q", msg)
	}
	var after int
	wantLocal(t, p.execute(t, `return await mcp.fx.pid({})`), &after)
	if after == before || alive(before) {
		t.Fatalf("want a fresh server after the crash: pid %d then %d", before, after)
	}
}

// A local server that never answers fails the call with RPC_TIMEOUT after
// PML_RPC_TIMEOUT_MS; the same server keeps serving other calls.
func TestStdioLocalServerNeverAnswers(t *testing.T) {
	g := startGateway(t, gateway.Options{})
	p := startStdio(t, fixtureWorkspace(t), append(gatewayEnv(g), "PML_RPC_TIMEOUT_MS=300"))

	start := time.Now()
	wantError(t, p.execute(t, `return await mcp.fx.hang({})`), "RPC_TIMEOUT", "fx:hang")
	if d := time.Since(start); d < 300*time.Millisecond || d > prompt {
		t.Fatalf("RPC_TIMEOUT after %v, want about 300ms", d)
	}
	var echoed string
	wantLocal(t, p.execute(t, `return await mcp.fx.echo({text: "still here"})`), &echoed)
	if echoed != "still here" {
		t.Fatalf("got %q", echoed)
	}
}

// The gateway dies while code runs locally: the server tool after the
// death is a prompt NETWORK_ERROR; local-only code keeps running offline; a
// restarted gateway is used again.
func TestStdioGatewayKilledMidRun(t *testing.T) {
	g := startGateway(t, gateway.Options{})
	p := startStdio(t, fixtureWorkspace(t), gatewayEnv(g))
	wantLocal(t, p.execute(t, `await mcp.fx.pid({}); return await mcp.json.parse({data: "1"})`), nil)

	ch := goExecute(p.session, `await mcp.fx.sleep({ms: 300}); return await mcp.json.parse({data: "2"})`)
	// The gateway answered execute_locally: the code is running here.
	waitFor(t, prompt, "the second execute", func() bool { return len(g.rec.executes()) == 2 })
	g.kill()
	killed := time.Now()
	r := <-ch
	if r.err != nil {
		t.Fatal(r.err)
	}
	wantError(t, decode(t, r.res), "NETWORK_ERROR")
	if d := time.Since(killed); d > 300*time.Millisecond+prompt {
		t.Fatalf("NETWORK_ERROR %v after the gateway died", d)
	}

	start := time.Now()
	var echoed string
	wantLocal(t, p.execute(t, `return await mcp.fx.echo({text: "offline"})`), &echoed)
	if echoed != "offline" {
		t.Fatalf("got %q", echoed)
	}
	wantError(t, p.execute(t, `return await mcp.json.parse({data: "3"})`), "NETWORK_ERROR")
	if d := time.Since(start); d > prompt {
		t.Fatalf("offline run and NETWORK_ERROR took %v", d)
	}

	g.restart(t)
	var n float64
	wantSuccess(t, p.execute(t, `return await mcp.math.add({a: 1, b: 2})`), &n)
	if n != 3 {
		t.Fatalf("after the restart: %v", n)
	}
}

// restart serves the gateway again on the address it had, as a restarted
// process would.
func (g *liveGateway) restart(t *testing.T) {
	t.Helper()
	ln, err := net.Listen("tcp", g.URL[len("http://"):])
	if err != nil {
		t.Fatal(err)
	}
	g.srv = &http.Server{Handler: g.rec.wrap(g.Service.Handler()), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = g.srv.Serve(ln) }()
}

func decode(t *testing.T, res *mcp.CallToolResult) wire.Answer {
	t.Helper()
	var a wire.Answer
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &a); err != nil {
		t.Fatal(err)
	}
	return a
}

const brokenConfig = `{
  "version": "1",
  "mcpServers": {
    "fx": {"command": "x",}
  }
}
`

// A malformed .pml.json is an INVALID_CONFIG naming the file and the line,
// whether it is broken at start or while running; the process stays up and
// serves again once the file is fixed.
func TestStdioMalformedConfig(t *testing.T) {
	bin := testfixture.BuildServer(t)
	fixed := map[string]any{"fx": map[string]any{"command": bin}}
	for _, tc := range []struct {
		name       string
		brokenFrom bool // broken before pml starts
	}{{"at start", true}, {"while running", false}} {
		t.Run(tc.name, func(t *testing.T) {
			g := startGateway(t, gateway.Options{})
			ws := t.TempDir()
			testfixture.WriteConfig(t, ws, fixed)
			if tc.brokenFrom {
				testfixture.WriteFile(t, ws, ".pml.json", brokenConfig)
			}
			p := startStdio(t, ws, gatewayEnv(g))
			if !tc.brokenFrom {
				wantLocal(t, p.execute(t, `return await mcp.fx.pid({})`), nil)
				testfixture.WriteFile(t, ws, ".pml.json", brokenConfig)
			}
			path := filepath.Join(ws, ".pml.json")
			wantError(t, p.execute(t, `return 1`), "INVALID_CONFIG", path, "line 4")
			wantError(t, p.execute(t, `return await mcp.fx.pid({})`), "INVALID_CONFIG", path)

			testfixture.WriteFile(t, ws, ".pml.json", `{"mcpServers": {"fx": {"args": ["x"]}}}`)
			wantError(t, p.execute(t, `return 1`), "INVALID_CONFIG", path, "mcpServers.fx", "command")

			testfixture.WriteConfig(t, ws, fixed)
			wantLocal(t, p.execute(t, `return await mcp.fx.pid({})`), nil)
		})
	}
}

// rawStdio is `pml stdio` on pipes the test holds itself: it can close
// stdin while a call is in flight (a ClientSession's Close would first wait
// for its calls to finish) and it sees every byte written to stdout.
type rawStdio struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	session *mcp.ClientSession
	stdout  *lockedBuffer
	stderr  *lockedBuffer
	exited  chan error
}

func startRawStdio(t *testing.T, ws string, env []string, args ...string) *rawStdio {
	t.Helper()
	cmd := exec.Command(pmlBinary(t), append([]string{"stdio"}, args...)...)
	cmd.Env = pmlEnv(append(env, "PML_WORKSPACE="+ws)...)
	r := &rawStdio{cmd: cmd, stdout: &lockedBuffer{}, stderr: &lockedBuffer{}, exited: make(chan error, 1)}
	cmd.Stderr = r.stderr
	var err error
	if r.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tee := struct {
		io.Reader
		io.Closer
	}{io.TeeReader(stdout, r.stdout), stdout}
	client := mcp.NewClient(&mcp.Implementation{Name: "raw", Version: "0"}, nil)
	if r.session, err = client.Connect(context.Background(), &mcp.IOTransport{Reader: tee, Writer: r.stdin}, nil); err != nil {
		t.Fatal(err)
	}
	go func() { r.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = r.stdin.Close()
		_ = cmd.Process.Kill()
		if t.Failed() {
			t.Logf("pml stdio stderr:\n%s", r.stderr)
		}
	})
	return r
}

// closeStdin closes pml's stdin and waits for it to exit.
func (r *rawStdio) closeStdin(t *testing.T) (time.Duration, error) {
	t.Helper()
	start := time.Now()
	_ = r.stdin.Close()
	select {
	case err := <-r.exited:
		return time.Since(start), err
	case <-time.After(callTimeout):
		t.Fatal("pml stdio did not exit after stdin closed")
		return 0, nil
	}
}

// Closing stdin while a call runs (the AI client quits) ends pml stdio
// promptly, and its local servers with it, even one stuck in a call.
func TestStdioStdinClosedMidCall(t *testing.T) {
	g := startGateway(t, gateway.Options{})
	ws := fixtureWorkspace(t)
	r := startRawStdio(t, ws, gatewayEnv(g))
	var server int
	wantLocal(t, callExecute(t, r.session, wire.ExecuteRequest{Code: `return await mcp.fx.pid({})`}), &server)

	marker := filepath.Join(ws, "started")
	goExecute(r.session, `await mcp.fx.count({file: "`+marker+`"}); return await mcp.fx.hang({})`)
	waitFor(t, prompt, "the hanging call", func() bool { _, err := os.Stat(marker); return err == nil })

	d, err := r.closeStdin(t)
	if err != nil {
		t.Fatalf("pml stdio exited with %v", err)
	}
	if d > prompt {
		t.Fatalf("pml stdio took %v to exit after stdin closed", d)
	}
	if left := waitGone([]int{server}, prompt); len(left) > 0 {
		t.Fatalf("local server %v outlived pml stdio", left)
	}
}

// Nothing but JSON-RPC goes to stdout, even with debug logging on, a local
// server writing to its stderr, console output and shell commands that print.
func TestStdioStdoutIsJSONRPCOnly(t *testing.T) {
	g := startGateway(t, gateway.Options{})
	r := startRawStdio(t, fixtureWorkspace(t), gatewayEnv(g), "-v")
	wantLocal(t, callExecute(t, r.session, wire.ExecuteRequest{Code: `console.log("to the log, not stdout");
		await mcp.fx.log({text: "server stderr line"});
		const out = await mcp.shell.exec({command: "echo printed by a command"});
		return [out, await mcp.json.parse({data: "[1]"})];`}), nil)
	wantError(t, callExecute(t, r.session, wire.ExecuteRequest{Code: `return await mcp.fx.fail({message: "boom"})`}), "TOOL_ERROR", "boom")
	if _, err := r.session.CallTool(context.Background(), &mcp.CallToolParams{Name: "discover", Arguments: map[string]any{"query": "file"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.closeStdin(t); err != nil {
		t.Fatalf("pml stdio: %v", err)
	}
	lines := 0
	sc := bufio.NewScanner(strings.NewReader(r.stdout.String()))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var msg struct {
			JSONRPC string `json:"jsonrpc"`
		}
		if err := json.Unmarshal(sc.Bytes(), &msg); err != nil || msg.JSONRPC != "2.0" {
			t.Fatalf("stdout line %d is not JSON-RPC: %q", lines+1, sc.Text())
		}
		lines++
	}
	if lines < 4 {
		t.Fatalf("only %d JSON-RPC lines on stdout", lines)
	}
	if !strings.Contains(r.stderr.String(), "level=DEBUG") {
		t.Fatalf("no debug log on stderr:\n%s", r.stderr)
	}
}
