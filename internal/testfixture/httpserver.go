package testfixture

import (
	"bufio"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// HTTPServer is a running fixture server in Streamable HTTP mode.
type HTTPServer struct {
	URL string    // the MCP endpoint, http://127.0.0.1:PORT/mcp (/sse with the -sse argument)
	Cmd *exec.Cmd // the process, e.g. to kill it and simulate an outage
}

// StartHTTPServer runs bin (from BuildServer) with -http on a free loopback
// port and returns once it listens. The process is stopped when the test ends.
func StartHTTPServer(t testing.TB, bin string, args ...string) *HTTPServer {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"-http", "127.0.0.1:0"}, args...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatalf("testfixture: stdout pipe: %v", err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("testfixture: start %s: %v", bin, err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})

	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	select {
	case line, ok := <-lines:
		if !ok || !strings.HasPrefix(line, "http://") {
			t.Fatalf("testfixture: %s did not report its URL (got %q)", bin, line)
		}
		return &HTTPServer{URL: line, Cmd: cmd}
	case <-time.After(10 * time.Second):
		t.Fatalf("testfixture: %s did not start listening within 10s", bin)
		return nil
	}
}
