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

	"github.com/pml-go/pml/internal/testfixture"
)

// Ctrl-C of a running `pml exec` answers CANCELLED, not EXECUTION_TIMEOUT:
// nobody's limit ran out. The workspace serves the next run.
func TestExecInterruptIsCancelled(t *testing.T) {
	ws := testfixture.Workspace(t, nil)
	cmd := exec.Command(pmlBinary(t), "exec", `await mcp.filesystem.write_file({path: "started", content: "1"}); for (;;) await mcp.crypto.sha256({data: "x"})`)
	cmd.Dir, cmd.Env = ws, pmlEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	testfixture.WaitFor(t, "the snippet to start", func() bool {
		_, err := os.Stat(filepath.Join(ws, "started"))
		return err == nil
	})
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("exit %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	a := execAnswer(t, stdout.String(), stderr.String())
	if a.ErrorCode != "CANCELLED" || !strings.Contains(a.Error, "cancelled by the caller") {
		t.Fatalf("answer %s", stdout.String())
	}
	out, errOut, code := runPML(t, ws, nil, "", "exec", "return 7")
	if a := execAnswer(t, out, errOut); code != 0 || string(a.Result) != "7" {
		t.Fatalf("next run: exit %d: %s\n%s", code, out, errOut)
	}
}
