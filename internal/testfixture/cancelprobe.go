package testfixture

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// CancelProbe is code for the fixture server that a test cancels midway:
// an echo, a 3 s sleep under a try/catch, then a count that writes a file.
// The sleep notes its start and its cancellation in files, so a test
// cancels a call under way, sees the cancellation reach the server, and
// sees that the write after the cancel point never happens.
type CancelProbe struct {
	Started, Cancelled, Written string
}

// NewCancelProbe names the probe's files in a new temp dir.
func NewCancelProbe(t testing.TB) CancelProbe {
	dir := t.TempDir()
	return CancelProbe{Started: filepath.Join(dir, "started"), Cancelled: filepath.Join(dir, "cancelled"), Written: filepath.Join(dir, "written")}
}

// Code echoes and counts on the server named ns and sleeps on sleepNS.
func (p CancelProbe) Code(ns, sleepNS string) string {
	return fmt.Sprintf(`await mcp.%s.echo({text: "go"});
try { await mcp.%s.sleep({ms: 3000, started: %q, cancelled: %q}) } catch (e) {}
await mcp.%s.count({file: %q}); return 1`, ns, sleepNS, p.Started, p.Cancelled, ns, p.Written)
}

// WaitStarted waits until the sleep is under way.
func (p CancelProbe) WaitStarted(t testing.TB) {
	t.Helper()
	WaitFor(t, "the sleep to start", func() bool { return exists(p.Started) })
}

// WaitCancelled waits until the server has seen the sleep cancelled.
func (p CancelProbe) WaitCancelled(t testing.TB) {
	t.Helper()
	WaitFor(t, "the server to see its call cancelled", func() bool { return exists(p.Cancelled) })
}

// WantNotWritten waits until well past the sleep's end (started at start),
// when a run that went on would have written, and checks it did not.
func (p CancelProbe) WantNotWritten(t testing.TB, start time.Time) {
	t.Helper()
	time.Sleep(time.Until(start.Add(4 * time.Second)))
	if _, err := os.Stat(p.Written); !os.IsNotExist(err) {
		t.Fatalf("the call after the cancel point ran: %v", err)
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
