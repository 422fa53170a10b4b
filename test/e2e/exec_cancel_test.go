package e2e

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/testfixture"
)

// Ctrl-C of a running `pml exec` answers CANCELLED, not EXECUTION_TIMEOUT
// (nobody's limit ran out) nor INTERNAL_ERROR, with the trace id the run
// is kept under, and exits 3, on every path: local mode, a hybrid run, and
// a server-only run on a gateway (issue 30, item 3). The workspace serves
// the next run.
func TestExecInterruptIsCancelled(t *testing.T) {
	g := startGateway(t, gateway.Options{})
	hybrid := `await mcp.filesystem.write_file({path: "started", content: "1"}); for (;;) await mcp.crypto.sha256({data: "x"})`
	for _, tc := range []struct {
		name    string
		env     []string
		code    string
		started func(ws string) bool
	}{
		{"local", nil, hybrid, startedFile},
		{"hybrid", gatewayEnv(g), hybrid, startedFile},
		{"gateway", gatewayEnv(g), `for (;;) {}`, func(string) bool { return g.Service.Admission().Stats().Admitted > 0 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := testfixture.Workspace(t, nil)
			cmd := exec.Command(pmlBinary(t), "exec", tc.code)
			cmd.Dir, cmd.Env = ws, pmlEnv(tc.env...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			testfixture.WaitFor(t, "the snippet to start", func() bool { return tc.started(ws) })
			if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 3 {
				t.Fatalf("exit %v\n%s\n%s", err, stdout.String(), stderr.String())
			}
			a := execAnswer(t, stdout.String(), stderr.String())
			if a.ErrorCode != "CANCELLED" || !strings.Contains(a.Error, "cancelled by the caller") || a.TraceID == "" {
				t.Fatalf("answer %s", stdout.String())
			}
			// The trace id names the run, kept as CANCELLED where it ran.
			testfixture.WaitFor(t, "the cancelled run's trace", func() bool {
				out, _, code := runPML(t, ws, tc.env, "", "traces", a.TraceID)
				return code == 0 && strings.Contains(out, "CANCELLED")
			})
			out, errOut, code := runPML(t, ws, tc.env, "", "exec", "return 7")
			if a := execAnswer(t, out, errOut); code != 0 || string(a.Result) != "7" {
				t.Fatalf("next run: exit %d: %s\n%s", code, out, errOut)
			}
		})
	}
}

func startedFile(ws string) bool {
	_, err := os.Stat(filepath.Join(ws, "started"))
	return err == nil
}
