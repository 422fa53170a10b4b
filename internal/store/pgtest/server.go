package pgtest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"time"
)

// server is one run of the postmaster.
type server struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed when the postmaster has exited
	err    error         // its exit status, once exited is closed
}

// launch starts the postmaster. It is not started through pg_ctl (which
// daemonizes it) but as our child with a parent-death signal, so that it
// cannot outlive the test binary.
//
// The death signal is tied to the OS thread that forked the child, not to the
// process, so the fork happens on a thread locked by a goroutine that stays
// alive until the postmaster exits.
func (c *Cluster) launch() (*server, error) {
	logFile, err := os.OpenFile(c.logPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open server log: %w", err)
	}
	cmd := c.command("postgres", "-D", c.dataDir(), "-p", strconv.Itoa(c.port),
		"-c", "listen_addresses=127.0.0.1",
		"-c", "unix_socket_directories=",
		// Durability is worthless for throwaway data; speed is not.
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "max_connections=300",
		"-c", "shared_buffers=32MB")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	setDeathSignal(cmd)

	s := &server{cmd: cmd, exited: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
		defer logFile.Close()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		s.err = cmd.Wait()
		close(s.exited)
	}()
	if err := <-started; err != nil {
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	return s, nil
}

// stop asks for a fast shutdown and waits; after timeout it kills.
func (s *server) stop(timeout time.Duration) error {
	if err := interrupt(s.cmd.Process); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("signal postgres: %w", err)
	}
	select {
	case <-s.exited:
		return nil
	case <-time.After(timeout):
	}
	if err := s.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("kill postgres: %w", err)
	}
	<-s.exited
	return fmt.Errorf("postgres did not shut down within %v; killed", timeout)
}

// command prepares a PostgreSQL binary to run as the server user, in the
// cluster directory, with a minimal environment.
func (c *Cluster) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(c.bin, name), args...)
	cmd.Dir = c.dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "LC_ALL=C", "TZ=UTC"}
	cmd.SysProcAttr = sysProcAttr(c.cred)
	return cmd
}
