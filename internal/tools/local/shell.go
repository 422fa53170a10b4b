package local

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/procenv"
	"github.com/pml-go/pml/internal/proctree"
	"github.com/pml-go/pml/internal/tools"
)

// pipeGrace is how long exec waits for output pipes after the shell exits:
// a background child holding them must not hang the call.
const pipeGrace = time.Second

func (w *workspace) shellTools() []tools.Func {
	return []tools.Func{
		tools.Typed(info("shell:exec",
			fmt.Sprintf("Run a command with "+shellName+" in the workspace (or a directory of it) and return {stdout, stderr, exit_code}. A non-zero exit is a result, not an error. The command and its children are killed after timeout_ms (default %d), reported as timed_out: true. Each output keeps its first %d bytes; more sets stdout_truncated / stderr_truncated.",
				w.shellTimeout.Milliseconds(), w.outputLimit),
			fmt.Sprintf(`{"type":"object","properties":{
				"command":{"type":"string","minLength":1},
				"cwd":{"type":"string","description":"Working directory. `+pathDoc+`"},
				"timeout_ms":{"type":"integer","minimum":1,"maximum":%d},
				"env":{"type":"object","additionalProperties":{"type":"string"},"description":"Variables added to the command's environment, which holds only PATH, HOME, locale and terminal variables and those the workspace configures."}
			},"required":["command"],"additionalProperties":false}`, maxShellTimeout.Milliseconds())),
			w.exec),
	}
}

type execArgs struct {
	Command   string            `json:"command"`
	Cwd       string            `json:"cwd"`
	TimeoutMS int64             `json:"timeout_ms"`
	Env       map[string]string `json:"env"`
}

type execResult struct {
	Stdout          string `json:"stdout"`
	Stderr          string `json:"stderr"`
	ExitCode        int    `json:"exit_code"`
	Signal          string `json:"signal,omitempty"`
	TimedOut        bool   `json:"timed_out,omitempty"`
	StdoutTruncated bool   `json:"stdout_truncated,omitempty"`
	StderrTruncated bool   `json:"stderr_truncated,omitempty"`
}

// exec runs the command as a process tree (internal/proctree: a process
// group, or a job object on Windows) so a timeout or a cancelled call kills
// everything it started, not only the shell.
func (w *workspace) exec(ctx context.Context, a execArgs) (any, error) {
	dir, err := w.resolve(a.Cwd)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(dir.real); err != nil || !fi.IsDir() {
		return nil, pmlerr.New(pmlerr.ToolError, "cwd %q is not an existing directory", a.Cwd)
	}
	timeout := w.shellTimeout
	if a.TimeoutMS > 0 {
		timeout = time.Duration(a.TimeoutMS) * time.Millisecond
	}
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	cmd := shellCommand(runCtx, a.Command)
	cmd.Dir = dir.real
	cmd.Env = procenv.Build(os.Environ(), w.shellVars(a.Env))
	tree := proctree.New(cmd)
	cmd.Cancel = tree.Kill
	cmd.WaitDelay = pipeGrace
	stdout := &cappedBuffer{limit: w.outputLimit}
	stderr := &cappedBuffer{limit: w.outputLimit}
	cmd.Stdout, cmd.Stderr = stdout, stderr

	err = cmd.Start()
	if err == nil {
		if err = tree.Started(); err != nil {
			_ = cmd.Wait()
			return nil, fmt.Errorf("start %s: %w", shellName, err)
		}
		err = cmd.Wait()
		_ = tree.Close()
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("shell:exec cancelled: %w", ctx.Err())
	}
	res := execResult{
		Stdout: stdout.String(), Stderr: stderr.String(),
		StdoutTruncated: stdout.truncated, StderrTruncated: stderr.truncated,
		TimedOut: errors.Is(runCtx.Err(), context.DeadlineExceeded),
	}
	var exitErr *exec.ExitError
	switch {
	case err == nil, errors.Is(err, exec.ErrWaitDelay):
		res.ExitCode = cmd.ProcessState.ExitCode()
	case errors.As(err, &exitErr):
		res.ExitCode = exitErr.ExitCode()
		if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.Signal = ws.Signal().String()
		}
	default:
		return nil, fmt.Errorf("start %s: %w", shellName, err)
	}
	return res, nil
}

// shellVars are the variables a command gets beyond the minimal base: the
// configured names that have a value, then the call's own env.
func (w *workspace) shellVars(call map[string]string) map[string]string {
	out := make(map[string]string, len(w.shellEnv)+len(call))
	if w.lookupEnv != nil {
		for _, name := range w.shellEnv {
			if v, ok := w.lookupEnv(name); ok {
				out[name] = v
			}
		}
	}
	maps.Copy(out, call)
	return out
}

// cappedBuffer keeps the first limit bytes written to it and swallows the
// rest, so a chatty command neither exhausts memory nor dies of EPIPE.
type cappedBuffer struct {
	buf       []byte
	limit     int
	truncated bool
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	room := c.limit - len(c.buf)
	if len(p) > room {
		c.truncated = true
		c.buf = append(c.buf, p[:max(room, 0)]...)
		return len(p), nil
	}
	c.buf = append(c.buf, p...)
	return len(p), nil
}

// String returns the output as valid UTF-8 (a cut may split a character,
// and commands may print bytes of any encoding).
func (c *cappedBuffer) String() string {
	return strings.ToValidUTF8(string(c.buf), "\uFFFD")
}
