//go:build linux

package scale_test

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/gatewayclient"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/wire"
	"github.com/pml-go/pml/internal/workspace"
)

// The package's gateway is unreachable: code that needs the gateway fails
// with NETWORK_ERROR within the connect timeout, and code whose tools are
// all local still runs. Two ways to be unreachable: nothing listens on the
// port (refused at once), or the host drops connection attempts. With a
// black hole the first request waits one connect timeout (the bound adds a
// second for scheduling on a loaded machine); the package then counts the
// gateway as down for a connect timeout, so its next attempts (forwarding
// the code after fetching the routing rules, the local-only run) fail over
// at once instead of each waiting again.
func TestFaultGatewayUnreachable(t *testing.T) {
	t.Parallel()
	t.Run("closed port", func(t *testing.T) { unreachable(t, closedPort(t), gatewayclient.ConnectTimeout) })
	t.Run("black hole", func(t *testing.T) { unreachable(t, blackHole(t), gatewayclient.ConnectTimeout+time.Second) })
}

// unreachable checks the package against a gateway at url that cannot be
// reached: NETWORK_ERROR within bound, then local-only code runs, also
// within bound.
func unreachable(t *testing.T, url string, bound time.Duration) {
	ws := t.TempDir()
	if err := os.Mkdir(filepath.Join(ws, "data"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "data", "notes.txt"), []byte("local"), 0o600); err != nil {
		t.Fatal(err)
	}
	pkg, err := workspace.New(workspace.Options{Workspace: ws, Gateway: gatewayclient.NewRemote(url, "pml_unused", "")})
	if err != nil {
		t.Fatal(err)
	}
	defer pkg.Close()
	ctx := t.Context()

	start := time.Now()
	failed := pkg.Execute(ctx, wire.ExecuteRequest{Code: serverCode})
	took := time.Since(start)
	if failed.Status != wire.StatusError || failed.ErrorCode != pmlerr.NetworkError || failed.Error == "" {
		t.Fatalf("server code with the gateway down: want NETWORK_ERROR, got %s", failed)
	}
	if took > bound {
		t.Fatalf("NETWORK_ERROR after %v, over %v", took, bound)
	}

	// Local-only code runs in the package's sandbox, gateway or not.
	start = time.Now()
	a := pkg.Execute(ctx, wire.ExecuteRequest{Code: `
		const entries = await mcp.filesystem.list_directory({ path: "data" });
		return entries.map(e => e.name);`})
	tookLocal := time.Since(start)
	if a.Status != wire.StatusSuccess || a.ExecutedLocally == nil || !*a.ExecutedLocally || string(a.Result) != `["notes.txt"]` {
		t.Fatalf("local-only code with the gateway down: %s %s", a, a.Result)
	}
	if tookLocal > bound {
		t.Fatalf("local-only code took %v", tookLocal)
	}
	t.Logf("NETWORK_ERROR after %v (%s); local-only code ran in %v",
		took.Round(time.Millisecond), failed.Error, tookLocal.Round(time.Millisecond))
}

// closedPort is the URL of a loopback port nothing listens on.
func closedPort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return "http://" + ln.Addr().String()
}

// blackHole is the URL of a loopback socket that never completes a
// connection: it listens with a backlog of 0 and never accepts, and its
// accept queue is filled, so the kernel drops further SYNs the way a
// firewall or a dead host does.
func blackHole(t *testing.T) string {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
	for {
		conn, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err != nil {
			return "http://" + addr // the queue is full
		}
		t.Cleanup(func() { _ = conn.Close() })
	}
}
