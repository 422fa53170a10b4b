package upstream

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"time"

	"github.com/pml-go/pml/internal/procenv"
	"github.com/pml-go/pml/internal/proctree"
)

// process is the child of a stdio server. We create the pipes ourselves
// rather than use the SDK's CommandTransport: that one only reaps the child
// inside Close, so a crash is seen as a bare EOF with no exit status, and it
// signals the child alone, not its process group.
type process struct {
	cmd    *exec.Cmd
	tree   *proctree.Tree // the child and what it starts, ended as one
	stdin  *os.File       // our write end of the child's stdin
	stdout *os.File       // our read end of the child's stdout

	exited  chan struct{} // closed once the child is reaped
	waitErr error         // the child's exit status; read only after exited is closed

	stderr     *stderrTail
	stderrDone chan struct{} // closed once the child's stderr reached EOF
}

func startProcess(cfg ServerConfig, minimalEnv bool, logger *slog.Logger) (*process, error) {
	cmd := exec.Command(cfg.Command, cfg.Args...)
	cmd.Dir = cfg.Dir
	if minimalEnv {
		cmd.Env = procenv.Build(os.Environ(), cfg.Env)
	} else {
		cmd.Env = os.Environ()
		for k, v := range cfg.Env {
			cmd.Env = append(cmd.Env, k+"="+v) // the last duplicate wins in exec
		}
	}
	cmd.SysProcAttr = sysProcAttr()
	tree := proctree.New(cmd)

	pipes, err := newPipes()
	if err != nil {
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = pipes.childIn, pipes.childOut, pipes.childErr
	err = cmd.Start()
	pipes.closeChildEnds()
	if err != nil {
		pipes.closeOurEnds()
		return nil, fmt.Errorf("start %s: %w", cfg.Command, err)
	}
	if err := tree.Started(); err != nil {
		_ = cmd.Wait()
		pipes.closeOurEnds()
		return nil, fmt.Errorf("start %s: %w", cfg.Command, err)
	}

	p := &process{
		cmd:        cmd,
		tree:       tree,
		stdin:      pipes.in,
		stdout:     pipes.out,
		exited:     make(chan struct{}),
		stderr:     &stderrTail{},
		stderrDone: make(chan struct{}),
	}
	go p.readStderr(pipes.err, logger.With("server", cfg.Name))
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// exitError describes how the child ended, with the end of its stderr,
// which is usually where a server says why it died. Call after exited.
func (p *process) exitError() error {
	// The last lines may still be in the pipe when the exit status arrives.
	select {
	case <-p.stderrDone:
	case <-time.After(stderrSettle):
	}
	err := p.waitErr
	if err == nil {
		err = errors.New("exit status 0")
	}
	if tail := p.stderr.String(); tail != "" {
		return fmt.Errorf("%w (stderr: %s)", err, tail)
	}
	return err
}

// stop ends the child the way the MCP stdio spec asks: close its stdin, wait,
// SIGTERM, wait, SIGKILL (on Windows both steps kill: internal/proctree). It
// then kills what is left of the process tree, so no descendant outlives the
// server.
func (p *process) stop(grace time.Duration) {
	_ = p.stdin.Close()
	if !p.waitExit(grace) {
		if p.tree.Terminate() != nil || !p.waitExit(grace) {
			_ = p.tree.Kill()
			<-p.exited
		}
	}
	// The group may be empty (ESRCH); that is the common, fine case.
	_ = p.tree.Kill()
	_ = p.tree.Close()
	_ = p.stdout.Close()
	// Let the stderr reader log the last lines before we report the stop.
	select {
	case <-p.stderrDone:
	case <-time.After(grace):
	}
}

func (p *process) waitExit(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
		return false
	}
}

// stderrSettle bounds the wait for a dead child's last stderr lines; a
// descendant that inherited the pipe can keep it open indefinitely.
const stderrSettle = 200 * time.Millisecond

// maxStderrLine bounds one logged stderr line; longer lines are logged in
// pieces. The reader must keep draining whatever comes, or a chatty child
// blocks on a full pipe.
const maxStderrLine = 64 << 10

func (p *process) readStderr(f *os.File, logger *slog.Logger) {
	defer close(p.stderrDone)
	defer f.Close()
	r := bufio.NewReaderSize(f, maxStderrLine)
	for {
		chunk, err := r.ReadSlice('\n')
		if line := string(bytes.TrimRight(chunk, "\r\n")); line != "" {
			logger.Debug("mcp server stderr", "line", line)
			p.stderr.add(line)
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return
		}
	}
}

// pipes are the three stdio pipes of a child. Using *os.File ends for the
// child means exec starts no copying goroutines, so cmd.Wait may run
// concurrently with our reads and never closes our ends under us.
type pipes struct {
	in, out, err                *os.File // our ends
	childIn, childOut, childErr *os.File
}

func newPipes() (*pipes, error) {
	var p pipes
	var err error
	if p.childIn, p.in, err = os.Pipe(); err != nil {
		return nil, fmt.Errorf("stdin pipe: %w", err)
	}
	if p.out, p.childOut, err = os.Pipe(); err != nil {
		p.closeChildEnds()
		p.closeOurEnds()
		return nil, fmt.Errorf("stdout pipe: %w", err)
	}
	if p.err, p.childErr, err = os.Pipe(); err != nil {
		p.closeChildEnds()
		p.closeOurEnds()
		return nil, fmt.Errorf("stderr pipe: %w", err)
	}
	return &p, nil
}

func (p *pipes) closeChildEnds() { closeAll(p.childIn, p.childOut, p.childErr) }

func (p *pipes) closeOurEnds() { closeAll(p.in, p.out, p.err) }

func closeAll(files ...*os.File) {
	for _, f := range files {
		if f != nil {
			_ = f.Close()
		}
	}
}
