package local

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/pmlerr"
)

func TestExec(t *testing.T) {
	f := newFixture(t)
	mkdir(t, filepath.Join(f.ws, "sub"))
	var r execResult
	f.ok(t, "shell:exec", map[string]any{"command": "echo out; echo err >&2; pwd; exit 3"}, &r)
	if r.Stdout != "out\n"+f.ws+"\n" || r.Stderr != "err\n" || r.ExitCode != 3 || r.TimedOut {
		t.Fatalf("exec = %+v", r)
	}
	f.ok(t, "shell:exec", map[string]any{"command": "pwd; echo $GREETING", "cwd": "sub", "env": map[string]string{"GREETING": "hi"}}, &r)
	if r.Stdout != filepath.Join(f.ws, "sub")+"\nhi\n" || r.ExitCode != 0 {
		t.Fatalf("exec in sub = %+v", r)
	}
	f.fails(t, "shell:exec", map[string]any{"command": "true", "cwd": "missing"}, pmlerr.ToolError, "not an existing directory")
	f.fails(t, "shell:exec", map[string]any{"command": ""}, pmlerr.ToolError, `"command"`)
	f.fails(t, "shell:exec", map[string]any{"command": "true", "timeout_ms": 0}, pmlerr.ToolError, `"timeout_ms"`)
}

// processGone reports whether pid has exited (a zombie counts as gone: it
// no longer runs, and nobody may be left to reap it in a container).
func processGone(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(fields) > 0 && (fields[0] == "Z" || fields[0] == "X")
}

func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !processGone(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("background process %d still runs", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func readPID(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

func TestExecTimeoutKillsTheProcessGroup(t *testing.T) {
	f := newFixture(t)
	start := time.Now()
	var r execResult
	f.ok(t, "shell:exec", map[string]any{
		"command":    "sleep 30 & echo $! > bg.pid; echo started; wait",
		"timeout_ms": 300,
	}, &r)
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("timed-out exec took %v", took)
	}
	if !r.TimedOut || r.ExitCode != -1 || r.Signal != "killed" || r.Stdout != "started\n" {
		t.Fatalf("exec = %+v, want timed_out with partial output", r)
	}
	waitGone(t, readPID(t, filepath.Join(f.ws, "bg.pid")))
}

func TestExecDefaultTimeoutOption(t *testing.T) {
	f := newFixture(t, WithShellTimeout(200*time.Millisecond))
	var r execResult
	f.ok(t, "shell:exec", map[string]any{"command": "sleep 10"}, &r)
	if !r.TimedOut {
		t.Fatalf("exec = %+v, want timed out by the default", r)
	}
}

func TestExecCancellationKillsTheProcessGroup(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	pidFile := filepath.Join(f.ws, "bg.pid")
	go func() {
		for !exists(pidFile) {
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
	}()
	_, err := f.p.Call(ctx, "shell:exec", mustJSON(t, map[string]any{"command": "sleep 30 & echo $! > bg.pid.tmp; mv bg.pid.tmp bg.pid; wait"}))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled exec = %v, want context.Canceled", err)
	}
	waitGone(t, readPID(t, pidFile))
}

func TestExecOutputIsCapped(t *testing.T) {
	f := newFixture(t, WithOutputLimit(10))
	var r execResult
	f.ok(t, "shell:exec", map[string]any{"command": "head -c 100000 /dev/zero | tr '\\0' a; echo short >&2"}, &r)
	if r.Stdout != "aaaaaaaaaa" || !r.StdoutTruncated || r.Stderr != "short\n" || r.StderrTruncated || r.ExitCode != 0 {
		t.Fatalf("exec = %+v", r)
	}
}

func TestExecDoesNotHangOnBackgroundChildren(t *testing.T) {
	f := newFixture(t)
	start := time.Now()
	var r execResult
	f.ok(t, "shell:exec", map[string]any{"command": "sleep 20 & echo $! > bg.pid; echo done"}, &r)
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("exec waited %v for a background child", took)
	}
	if r.Stdout != "done\n" || r.ExitCode != 0 {
		t.Fatalf("exec = %+v", r)
	}
	// Leave no stray process behind the test.
	pid := readPID(t, filepath.Join(f.ws, "bg.pid"))
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}

// A command sees the minimal base, the configured names and the call's env;
// never the package's gateway key or other exported secrets.
func TestExecEnvironmentIsMinimal(t *testing.T) {
	t.Setenv("PML_API_KEY", "pml_should_not_leak")
	t.Setenv("GITHUB_TOKEN", "ghp_should_not_leak")
	t.Setenv("NODE_ENV", "development")
	lookup := func(name string) (string, bool) {
		if name == "FROM_DOTENV" {
			return "dotenv-value", true
		}
		return os.LookupEnv(name)
	}
	f := newFixture(t, WithShellEnv([]string{"NODE_ENV", "FROM_DOTENV", "UNSET_NAME"}, lookup))
	var r execResult
	f.ok(t, "shell:exec", map[string]any{"command": "env", "env": map[string]string{"CALL_VAR": "c"}}, &r)
	for _, leak := range []string{"PML_API_KEY", "GITHUB_TOKEN", "UNSET_NAME"} {
		if strings.Contains(r.Stdout, leak+"=") {
			t.Fatalf("%s reached the command:\n%s", leak, r.Stdout)
		}
	}
	for _, want := range []string{"PATH=", "NODE_ENV=development", "FROM_DOTENV=dotenv-value", "CALL_VAR=c"} {
		if !strings.Contains(r.Stdout, want) {
			t.Fatalf("%s missing:\n%s", want, r.Stdout)
		}
	}
	// Without configured names, only the base.
	g := newFixture(t)
	g.ok(t, "shell:exec", map[string]any{"command": "env"}, &r)
	if strings.Contains(r.Stdout, "NODE_ENV=") || strings.Contains(r.Stdout, "PML_API_KEY") {
		t.Fatalf("unlisted variables reached the command:\n%s", r.Stdout)
	}
}
