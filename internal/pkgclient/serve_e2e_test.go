//go:build linux

package pkgclient_test

import (
	"context"
	"net"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/wire"
)

// freePort returns a loopback port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// pml serve --port: the same package over Streamable HTTP at /mcp on
// 127.0.0.1; SIGINT stops it and its local servers.
func TestServeStreamableHTTP(t *testing.T) {
	g := startGateway(t, gateway.Options{})
	ws := fixtureWorkspace(t)
	writeFile(t, ws, "data.txt", "served")
	port := freePort(t)
	cmd := exec.Command(pmlBinary(t), "serve", "--port", strconv.Itoa(port))
	cmd.Env = pmlEnv(append(gatewayEnv(g), "PML_WORKSPACE="+ws)...)
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		if t.Failed() {
			t.Logf("pml serve stderr:\n%s", stderr)
		}
	})

	endpoint := "http://127.0.0.1:" + strconv.Itoa(port) + "/mcp"
	waitFor(t, callTimeout, "pml serve to listen", func() bool {
		c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	s, err := mcp.NewClient(&mcp.Implementation{Name: "http-client", Version: "0"}, nil).
		Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: endpoint}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Text string  `json:"text"`
		Pid  int     `json:"pid"`
		N    float64 `json:"n"`
	}
	wantLocal(t, callExecute(t, s, wire.ExecuteRequest{Code: `return {
		text: await mcp.filesystem.read_file({path: "data.txt"}),
		pid: await mcp.fx.pid({}),
		n: await mcp.math.add({a: 20, b: 22})}`}), &res)
	if res.Text != "served" || res.N != 42 || res.Pid == 0 {
		t.Fatalf("result %+v", res)
	}
	_ = s.Close()

	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("pml serve exited with %v", err)
		}
	case <-time.After(prompt + 5*time.Second): // the HTTP drain may take its 5 s
		_ = cmd.Process.Signal(syscall.SIGKILL)
		t.Fatal("pml serve did not stop on SIGINT")
	}
	if left := waitGone([]int{res.Pid}, prompt); len(left) > 0 {
		t.Fatalf("local server %v outlived pml serve", left)
	}
}
