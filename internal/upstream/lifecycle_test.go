package upstream_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/testfixture"
	"github.com/pml-go/pml/internal/upstream"
)

func TestLazyStartThenReuse(t *testing.T) {
	p, starts := newPool(t, upstream.Options{})
	s := p.Add(fixture(t, "fx"))
	if s.Running() || len(starts.get()) != 0 {
		t.Fatal("server started before first use")
	}
	first := pidOf(t, s)
	if !s.Running() {
		t.Fatal("server not running after a call")
	}
	for range 3 {
		if pid := pidOf(t, s); pid != first {
			t.Fatalf("call ran in process %d, want the first one, %d", pid, first)
		}
	}
	if got := starts.get(); !slices.Equal(got, []bool{false}) {
		t.Fatalf("OnStart calls (restart flags) = %v, want [false]", got)
	}
	if got, ok := p.Server("fx"); !ok || got != s {
		t.Fatal("Pool.Server does not return the added server")
	}
}

func TestConcurrentCallsShareOneSession(t *testing.T) {
	p, starts := newPool(t, upstream.Options{})
	s := p.Add(fixture(t, "fx"))
	const n, sleep = 50, 300 * time.Millisecond

	begin := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			out, err := s.Call(ctxTimeout(t, 20*time.Second), "sleep", json.RawMessage(`{"ms":300}`))
			if err == nil && string(out) != `"slept"` {
				err = fmt.Errorf("sleep returned %s", out)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	// Serialised, the calls would take n*sleep = 15 s.
	if elapsed := time.Since(begin); elapsed > 10*sleep {
		t.Fatalf("%d concurrent calls of %s took %s: not multiplexed", n, sleep, elapsed)
	}
	if got := len(starts.get()); got != 1 {
		t.Fatalf("started %d times, want 1", got)
	}
}

// A crash fails the calls in flight at once, with the exit status and the
// end of stderr, and the next call restarts the server: through the SDK's
// client, and on the direct path of a server of an older protocol.
func TestCrashFailsInFlightCallsAndRestarts(t *testing.T) {
	for name, direct := range map[string]bool{"sdk": false, "direct": true} {
		t.Run(name, func(t *testing.T) { testCrashFailsInFlightCalls(t, direct) })
	}
}

func testCrashFailsInFlightCalls(t *testing.T, direct bool) {
	p, starts := newPool(t, upstream.Options{})
	cfg := fixture(t, "fx")
	if direct {
		cfg = olderFixture(t, "fx")
	}
	s := p.Add(cfg)
	before := pidOf(t, s)
	if upstream.CallsDirect(s) != direct {
		t.Fatalf("calls direct: %v, want %v", upstream.CallsDirect(s), direct)
	}

	// A slow call in flight must fail with the crash, not wait out its 30 s.
	slow := make(chan error, 1)
	go func() {
		_, err := s.Call(ctxTimeout(t, 60*time.Second), "sleep", json.RawMessage(`{"ms":30000}`))
		slow <- err
	}()
	time.Sleep(100 * time.Millisecond)

	begin := time.Now()
	_, err := s.Call(ctxTimeout(t, 60*time.Second), "crash", nil)
	pe := wantCode(t, err, pmlerr.ToolError)
	if !strings.Contains(pe.Message, "MCP server fx exited") || !strings.Contains(pe.Message, "exit status 3") {
		t.Fatalf("crash error = %q, want the exit status", pe.Message)
	}
	if !strings.Contains(pe.Message, "crashing on purpose") {
		t.Fatalf("crash error = %q, want the end of stderr", pe.Message)
	}
	select {
	case err := <-slow:
		wantCode(t, err, pmlerr.ToolError)
	case <-time.After(5 * time.Second):
		t.Fatal("in-flight call still waiting 5 s after the crash")
	}
	if elapsed := time.Since(begin); elapsed > 3*time.Second {
		t.Fatalf("crash reported after %s, want promptly", elapsed)
	}
	if alive(before) {
		t.Fatalf("crashed process %d still alive", before)
	}

	after := pidOf(t, s)
	if after == before || upstream.CallsDirect(s) != direct {
		t.Fatalf("after the crash: pid %d (was %d), calls direct %v", after, before, upstream.CallsDirect(s))
	}
	if got := starts.get(); !slices.Equal(got, []bool{false, true}) {
		t.Fatalf("OnStart restart flags = %v, want [false true]", got)
	}
}

func TestDeadlineIsRPCTimeout(t *testing.T) {
	p, _ := newPool(t, upstream.Options{})
	s := p.Add(fixture(t, "fx"))
	pid := pidOf(t, s)

	begin := time.Now()
	_, err := s.Call(ctxTimeout(t, 300*time.Millisecond), "hang", nil)
	wantCode(t, err, pmlerr.RPCTimeout)
	if elapsed := time.Since(begin); elapsed > 2*time.Second {
		t.Fatalf("timed out after %s, want about 300ms", elapsed)
	}
	// A hung call does not poison the session.
	if got := pidOf(t, s); got != pid {
		t.Fatalf("server restarted after a timeout (pid %d, was %d)", got, pid)
	}
}

func TestCancelIsContextCanceled(t *testing.T) {
	p, _ := newPool(t, upstream.Options{})
	s := p.Add(fixture(t, "fx"))
	pidOf(t, s)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err := s.Call(ctx, "hang", nil)
	if err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Fatalf("cancelled call error = %v, want context.Canceled", err)
	}
}

func TestIdleStopThenRestartOnUse(t *testing.T) {
	p, starts := newPool(t, upstream.Options{IdleTimeout: 200 * time.Millisecond})
	s := p.Add(fixture(t, "fx"))
	first := pidOf(t, s)
	eventually(t, 5*time.Second, "idle server stopped", func() bool { return !s.Running() && !alive(first) })

	second := pidOf(t, s)
	if second == first {
		t.Fatal("server not restarted after its idle stop")
	}
	if got := starts.get(); !slices.Equal(got, []bool{false, true}) {
		t.Fatalf("OnStart restart flags = %v, want [false true]", got)
	}
}

func TestBusyServerIsNotIdle(t *testing.T) {
	p, _ := newPool(t, upstream.Options{IdleTimeout: 100 * time.Millisecond})
	s := p.Add(fixture(t, "fx"))
	pid := pidOf(t, s)
	// One call lasting several idle periods keeps the server up.
	call(t, s, "sleep", `{"ms":500}`)
	if got := pidOf(t, s); got != pid {
		t.Fatal("server stopped while a call was in flight")
	}
}

func TestNegativeIdleTimeoutNeverStops(t *testing.T) {
	p, _ := newPool(t, upstream.Options{IdleTimeout: -1})
	s := p.Add(fixture(t, "fx"))
	pid := pidOf(t, s)
	time.Sleep(300 * time.Millisecond)
	if !s.Running() || !alive(pid) {
		t.Fatal("server stopped with IdleTimeout < 0")
	}
}

func TestCloseLeavesNoProcess(t *testing.T) {
	p, _ := newPool(t, upstream.Options{})
	bin := testfixture.BuildServer(t)
	// A child of the server, in its process group, must die too.
	grandchildFile := filepath.Join(t.TempDir(), "grandchild.pid")
	withChild := p.Add(upstream.ServerConfig{Name: "parent", Command: "sh",
		Args: []string{"-c", `sleep 1000 & echo $! > "$1"; exec "$2"`, "sh", grandchildFile, bin}})
	hung := p.Add(fixture(t, "hung"))

	pids := []int{pidOf(t, withChild), pidOf(t, hung)}
	data, err := os.ReadFile(grandchildFile)
	if err != nil {
		t.Fatal(err)
	}
	grandchild, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	pids = append(pids, grandchild)

	// A call that never answers, in flight during Close, needs SIGTERM.
	hangErr := make(chan error, 1)
	go func() {
		_, err := hung.Call(context.Background(), "hang", nil)
		hangErr <- err
	}()
	time.Sleep(100 * time.Millisecond)

	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("process %d alive after Close", pid)
		}
	}
	select {
	case err := <-hangErr:
		wantCode(t, err, pmlerr.ToolError)
	case <-time.After(5 * time.Second):
		t.Fatal("in-flight call not failed by Close")
	}
	_, err = hung.Call(context.Background(), "echo", json.RawMessage(`{"text":"x"}`))
	wantCode(t, err, pmlerr.ToolError)
}

func TestAddReplacesAndStopsOldServer(t *testing.T) {
	p, _ := newPool(t, upstream.Options{})
	old := p.Add(fixture(t, "fx"))
	oldPid := pidOf(t, old)

	cfg := fixture(t, "fx")
	cfg.Env = map[string]string{"PML_FIXTURE_GEN": "2"}
	replacement := p.Add(cfg)
	eventually(t, 5*time.Second, "replaced server stopped", func() bool { return !alive(oldPid) })
	if got := string(call(t, replacement, "env", `{"name":"PML_FIXTURE_GEN"}`)); got != "2" {
		t.Fatalf("replacement server sees env %s, want 2", got)
	}
	if s, _ := p.Server("fx"); s != replacement {
		t.Fatal("Pool.Server returns the replaced server")
	}
}

func TestFailingStartBacksOff(t *testing.T) {
	p, starts := newPool(t, upstream.Options{})
	attempts := filepath.Join(t.TempDir(), "attempts")
	s := p.Add(upstream.ServerConfig{Name: "broken", Command: "sh",
		Args: []string{"-c", `echo x >> "$1"; echo "cannot open config" >&2; exit 7`, "sh", attempts}})
	countAttempts := func() int {
		data, _ := os.ReadFile(attempts)
		return strings.Count(string(data), "\n")
	}

	_, err := s.Call(ctxTimeout(t, 10*time.Second), "echo", nil)
	pe := wantCode(t, err, pmlerr.ToolError)
	for _, want := range []string{"broken failed to start", "exit status 7", "cannot open config"} {
		if !strings.Contains(pe.Message, want) {
			t.Fatalf("start error %q lacks %q", pe.Message, want)
		}
	}
	// Straight away: no new attempt, a clear error instead.
	_, err = s.Call(ctxTimeout(t, 10*time.Second), "echo", nil)
	pe = wantCode(t, err, pmlerr.ToolError)
	if !strings.Contains(pe.Message, "next attempt in") || !strings.Contains(pe.Message, "exit status 7") {
		t.Fatalf("error during backoff = %q", pe.Message)
	}
	if n := countAttempts(); n != 1 {
		t.Fatalf("%d start attempts during backoff, want 1", n)
	}
	time.Sleep(400 * time.Millisecond)
	_, err = s.Call(ctxTimeout(t, 10*time.Second), "echo", nil)
	wantCode(t, err, pmlerr.ToolError)
	if n := countAttempts(); n != 2 {
		t.Fatalf("%d start attempts after the backoff, want 2", n)
	}
	if len(starts.get()) != 0 {
		t.Fatal("OnStart called for failed starts")
	}
}

func TestMissingCommand(t *testing.T) {
	p, _ := newPool(t, upstream.Options{})
	s := p.Add(upstream.ServerConfig{Name: "ghost", Command: "/nonexistent/mcp-server"})
	_, err := s.Tools(ctxTimeout(t, 10*time.Second))
	pe := wantCode(t, err, pmlerr.ToolError)
	if !strings.Contains(pe.Message, "/nonexistent/mcp-server") {
		t.Fatalf("error %q does not name the command", pe.Message)
	}
}

func TestHandshakeTimeout(t *testing.T) {
	p, _ := newPool(t, upstream.Options{StartTimeout: 300 * time.Millisecond})
	// sleep reads nothing and writes nothing: the handshake never completes.
	s := p.Add(upstream.ServerConfig{Name: "mute", Command: "sleep", Args: []string{"1000"}})
	begin := time.Now()
	_, err := s.Tools(ctxTimeout(t, 10*time.Second))
	pe := wantCode(t, err, pmlerr.ToolError)
	if !strings.Contains(pe.Message, "handshake") {
		t.Fatalf("error %q does not mention the handshake", pe.Message)
	}
	if elapsed := time.Since(begin); elapsed > 3*time.Second {
		t.Fatalf("handshake timeout took %s", elapsed)
	}
}

func TestStderrIsLoggedAtDebug(t *testing.T) {
	rec := &logRecorder{}
	p, _ := newPool(t, upstream.Options{Logger: slog.New(rec)})
	s := p.Add(fixture(t, "chatty"))
	pid := pidOf(t, s)
	call(t, s, "log", `{"text":"hello from stderr"}`)

	for _, line := range []string{fmt.Sprintf("mcpserver: ready pid=%d", pid), "hello from stderr"} {
		eventually(t, 5*time.Second, "stderr line logged: "+line, func() bool {
			return rec.find(func(m map[string]string) bool {
				return m["level"] == "DEBUG" && m["server"] == "chatty" && m["line"] == line
			})
		})
	}
}

func TestEnvAndDir(t *testing.T) {
	p, _ := newPool(t, upstream.Options{})
	dir := t.TempDir()
	cfg := fixture(t, "fx")
	cfg.Env = map[string]string{"PML_TEST_VALUE": "from config"}
	cfg.Dir = dir
	s := p.Add(cfg)
	if got := string(call(t, s, "env", `{"name":"PML_TEST_VALUE"}`)); got != `"from config"` {
		t.Fatalf("env = %s", got)
	}
	var cwd string
	if err := json.Unmarshal(call(t, s, "cwd", `{}`), &cwd); err != nil {
		t.Fatal(err)
	}
	if real, _ := filepath.EvalSymlinks(dir); cwd != real && cwd != dir {
		t.Fatalf("cwd = %s, want %s", cwd, dir)
	}
}

func TestCloseDuringStart(t *testing.T) {
	p, _ := newPool(t, upstream.Options{StartTimeout: time.Minute})
	pidFile := filepath.Join(t.TempDir(), "pid")
	s := p.Add(upstream.ServerConfig{Name: "slow", Command: "sh",
		Args: []string{"-c", `echo $$ > "$1"; exec sleep 1000`, "sh", pidFile}})
	callErr := make(chan error, 1)
	go func() {
		_, err := s.Tools(context.Background())
		callErr <- err
	}()
	var pid int
	eventually(t, 5*time.Second, "slow server spawned", func() bool {
		data, err := os.ReadFile(pidFile)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(data)))
		return err == nil && pid > 0
	})

	begin := time.Now()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if elapsed := time.Since(begin); elapsed > 5*time.Second {
		t.Fatalf("Close during a start took %s", elapsed)
	}
	if alive(pid) {
		t.Fatalf("process %d of a cancelled start alive after Close", pid)
	}
	wantCode(t, <-callErr, pmlerr.ToolError)
}

func TestRemoveStopsServer(t *testing.T) {
	p, _ := newPool(t, upstream.Options{})
	s := p.Add(fixture(t, "fx"))
	pid := pidOf(t, s)
	p.Remove("fx")
	p.Remove("never-added")
	if _, ok := p.Server("fx"); ok {
		t.Fatal("removed server still registered")
	}
	eventually(t, 5*time.Second, "removed server's process gone", func() bool { return !alive(pid) })
	_, err := s.Call(ctxTimeout(t, 5*time.Second), "pid", nil)
	wantCode(t, err, pmlerr.ToolError)
}
