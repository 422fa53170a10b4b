//go:build linux

package scale_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// replica is one running `pml gateway` process.
type replica struct {
	name       string
	url        string // http://127.0.0.1:PORT, without /mcp
	metricsURL string // its --metrics-addr listener
	cmd        *exec.Cmd
	exited     chan struct{} // closed when the process has exited
	log        *lockedBuffer // its stderr, for failure messages
}

// startupTimeout covers migrations under the advisory lock while another
// replica holds it, on a machine loaded by other test binaries.
const startupTimeout = 30 * time.Second

var (
	listeningRE        = regexp.MustCompile(`msg=listening addr=(http://\S+)`)
	metricsListeningRE = regexp.MustCompile(`msg=listening server=metrics addr=(http://\S+)`)
)

// startReplica runs `pml gateway --addr 127.0.0.1:0 --db dsn [extra...]` and
// waits for its "listening" log line. The process is stopped when t ends,
// and dies with the test binary in any case (parent-death signal).
func startReplica(t testing.TB, name, dsn string, extra ...string) *replica {
	t.Helper()
	r, err := launchReplica(name, dsn, extra...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.stop)
	return r
}

// startReplicas starts n replicas on dsn at the same moment: on a fresh
// database they race for the migrations.
func startReplicas(t testing.TB, n int, dsn string, extra ...string) []*replica {
	t.Helper()
	out := make([]*replica, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { out[i], errs[i] = launchReplica(fmt.Sprintf("replica-%c", 'a'+i), dsn, extra...) })
	}
	wg.Wait()
	for _, r := range out {
		if r != nil {
			t.Cleanup(r.stop)
		}
	}
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return out
}

func launchReplica(name, dsn string, extra ...string) (*replica, error) {
	args := append([]string{"gateway", "--addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0", "--db", dsn}, extra...)
	cmd := exec.Command(pmlBin, args...)
	cmd.Env = append(os.Environ(), "PML_DEBUG=")
	// SIGKILL if the test binary dies first; see fork below.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	addr, metricsAddr := make(chan string, 1), make(chan string, 1)
	r := &replica{name: name, cmd: cmd, exited: make(chan struct{}), log: &lockedBuffer{addr: addr, metricsAddr: metricsAddr}}
	cmd.Stderr = r.log
	if err := r.fork(); err != nil {
		return nil, fmt.Errorf("%s: start: %w", name, err)
	}
	timeout := time.After(startupTimeout)
	for r.url == "" || r.metricsURL == "" {
		select {
		case r.url = <-addr:
		case r.metricsURL = <-metricsAddr:
		case <-r.exited:
			return nil, fmt.Errorf("%s exited during startup: %v\n%s", name, cmd.ProcessState, r.log)
		case <-timeout:
			r.stop()
			return nil, fmt.Errorf("%s not listening after %v\n%s", name, startupTimeout, r.log)
		}
	}
	return r, nil
}

// fork starts the process from a goroutine locked to its OS thread until the
// process exits: the parent-death signal is tied to the forking thread, which
// must not be retired while the child runs.
func (r *replica) fork() error {
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
		if err := r.cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		_ = r.cmd.Wait()
		close(r.exited)
	}()
	return <-started
}

// kill is the fault: SIGKILL, no draining.
func (r *replica) kill(t testing.TB) {
	t.Helper()
	_ = r.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-r.exited:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not die after SIGKILL", r.name)
	}
}

// stop is the orderly end: SIGTERM, then SIGKILL after a few seconds.
func (r *replica) stop() {
	select {
	case <-r.exited:
		return
	default:
	}
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.exited:
	case <-time.After(8 * time.Second):
		_ = r.cmd.Process.Signal(syscall.SIGKILL)
		<-r.exited
	}
}

// metric returns the value of one Prometheus series of the replica's
// /metrics, given as it appears there (name{labels}); 0 when absent.
func (r *replica) metric(ctx context.Context, series string) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.metricsURL+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("%s /metrics: %w", r.name, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, fmt.Errorf("%s /metrics: %w", r.name, err)
	}
	for line := range strings.Lines(string(body)) {
		if rest, ok := strings.CutPrefix(line, series+" "); ok {
			return strconv.ParseFloat(strings.TrimSpace(rest), 64)
		}
	}
	return 0, nil
}

// serverSuccesses is the replica's own count of successful server-side runs.
func (r *replica) serverSuccesses(t testing.TB) int {
	t.Helper()
	v, err := r.metric(t.Context(), `pml_executions_total{side="server",status="success"}`)
	if err != nil {
		t.Fatal(err)
	}
	return int(v)
}

// lockedBuffer keeps a replica's stderr for failure messages, and sends the
// addresses of its "listening" lines on addr and metricsAddr once each.
type lockedBuffer struct {
	mu          sync.Mutex
	buf         bytes.Buffer
	scanned     int // bytes of buf already searched for the listen lines
	addr        chan<- string
	metricsAddr chan<- string
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Write(p)
	if b.addr == nil && b.metricsAddr == nil {
		return len(p), nil
	}
	all := b.buf.Bytes()
	if end := bytes.LastIndexByte(all, '\n'); end >= b.scanned {
		lines := all[b.scanned:end]
		if m := listeningRE.FindSubmatch(lines); m != nil && b.addr != nil {
			b.addr <- string(m[1])
			b.addr = nil
		}
		if m := metricsListeningRE.FindSubmatch(lines); m != nil && b.metricsAddr != nil {
			b.metricsAddr <- string(m[1])
			b.metricsAddr = nil
		}
		b.scanned = end + 1
	}
	return len(p), nil
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
