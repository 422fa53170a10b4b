package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer collects the gateway's log lines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

var (
	mainListening    = regexp.MustCompile(`msg=listening addr=(http://\S+)`)
	metricsListening = regexp.MustCompile(`msg=listening server=metrics addr=(http://\S+)`)
)

// runGateway runs `pml gateway` in this process with args; it stops when
// the test ends. done receives the command's result.
func runGateway(t *testing.T, args ...string) (logs *syncBuffer, done <-chan error, stop func()) {
	t.Helper()
	logs = &syncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	cmd := newGatewayCmd(func() *slog.Logger { return log })
	cmd.SetArgs(append([]string{"--addr", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "gw.db")}, args...))
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	finished := make(chan struct{})
	go func() {
		errc <- cmd.ExecuteContext(ctx)
		close(finished)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-finished:
		case <-time.After(10 * time.Second):
			t.Error("the gateway did not stop")
		}
	})
	return logs, errc, cancel
}

// waitFor returns the first submatch of re in the logs.
func waitFor(t *testing.T, logs *syncBuffer, re *regexp.Regexp) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if m := re.FindStringSubmatch(logs.String()); m != nil {
			return m[1]
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no %s in the logs:\n%s", re, logs)
	return ""
}

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// /metrics is served on its own listener only.
func TestGatewayMetricsListener(t *testing.T) {
	logs, _, _ := runGateway(t, "--metrics-addr", "127.0.0.1:0")
	public := waitFor(t, logs, mainListening)
	metrics := waitFor(t, logs, metricsListening)
	if status, body := httpGet(t, public+"/metrics"); status != http.StatusNotFound || strings.Contains(body, "pml_trace_queue_depth") {
		t.Fatalf("public /metrics: HTTP %d", status)
	}
	if status, body := httpGet(t, metrics+"/metrics"); status != http.StatusOK || !strings.Contains(body, "pml_trace_queue_depth") {
		t.Fatalf("metrics listener: HTTP %d", status)
	}
	// Nothing else of the gateway is on the metrics listener.
	if status, _ := httpGet(t, metrics+"/healthz"); status != http.StatusNotFound {
		t.Fatalf("metrics listener /healthz: HTTP %d", status)
	}
	if status, _ := httpGet(t, public+"/healthz"); status != http.StatusOK {
		t.Fatalf("public /healthz: HTTP %d", status)
	}
	if strings.Contains(logs.String(), "not on loopback") {
		t.Fatalf("loopback warned about:\n%s", logs)
	}
}

// "off" serves no metrics at all; the default is loopback.
func TestGatewayMetricsOff(t *testing.T) {
	if f := newGatewayCmd(nil).Flags().Lookup("metrics-addr"); f == nil || f.DefValue != "127.0.0.1:9464" {
		t.Fatalf("--metrics-addr default: %+v", f)
	}
	logs, _, stop := runGateway(t, "--metrics-addr", "off")
	public := waitFor(t, logs, mainListening)
	if status, _ := httpGet(t, public+"/healthz"); status != http.StatusOK {
		t.Fatalf("public /healthz: HTTP %d", status)
	}
	stop()
	if metricsListening.MatchString(logs.String()) {
		t.Fatalf("metrics served with off:\n%s", logs)
	}
}

// A metrics address that cannot be had stops the gateway with the reason.
func TestGatewayMetricsListenFails(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	logs, done, _ := runGateway(t, "--metrics-addr", taken.Addr().String())
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "listen "+taken.Addr().String()) {
			t.Fatalf("want the listen error, got %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("the gateway kept running:\n%s", logs)
	}
}

// A second gateway on the host finds the default metrics address taken: it
// warns, naming the flag, and serves without metrics; an explicit address
// that is taken still stops it (TestGatewayMetricsListenFails).
func TestGatewayDefaultMetricsAddrTaken(t *testing.T) {
	taken, err := net.Listen("tcp", defaultMetricsAddr)
	if err != nil {
		t.Skipf("cannot hold the default metrics address for the test: %v", err)
	}
	defer taken.Close()
	logs, done, _ := runGateway(t)
	public := waitFor(t, logs, mainListening)
	if status, _ := httpGet(t, public+"/healthz"); status != http.StatusOK {
		t.Fatalf("/healthz: HTTP %d", status)
	}
	if !strings.Contains(logs.String(), "--metrics-addr") || !strings.Contains(logs.String(), "level=WARN") {
		t.Fatalf("no warning naming --metrics-addr:\n%s", logs)
	}
	if metricsListening.MatchString(logs.String()) {
		t.Fatalf("a metrics listener was started:\n%s", logs)
	}
	select {
	case err := <-done:
		t.Fatalf("the gateway stopped: %v", err)
	default:
	}
}

// Only a loopback metrics address goes without a warning.
func TestIsLoopback(t *testing.T) {
	for host, want := range map[string]bool{"127.0.0.1": true, "::1": true, "localhost": true, "127.8.0.1": true,
		"0.0.0.0": false, "": false, "::": false, "10.0.0.1": false, "metrics.invalid": false} {
		if got := isLoopback(host); got != want {
			t.Errorf("isLoopback(%q) = %v", host, got)
		}
	}
}
