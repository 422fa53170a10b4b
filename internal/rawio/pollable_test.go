//go:build unix

package rawio

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// blockingPipe returns a pipe in blocking mode, as a process inherits its
// stdin and stdout: os.NewFile does not put such a descriptor in the
// poller.
func blockingPipe(t *testing.T) (r, w *os.File) {
	var fds [2]int
	if err := unix.Pipe(fds[:]); err != nil {
		t.Fatal(err)
	}
	r, w = os.NewFile(uintptr(fds[0]), "r"), os.NewFile(uintptr(fds[1]), "w")
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}

// handedOver keeps the files Pollable made in these tests reachable for
// good. Pollable makes a second file on a descriptor (pml stdio's, on
// os.Stdin's, which stays reachable); the test closes the first, and a
// second one collected later would close the descriptor's number again,
// by then another test's pipe.
var handedOver []*os.File

func TestAPipeWaitsInThePoller(t *testing.T) {
	r, w := blockingPipe(t)
	if err := r.SetReadDeadline(time.Now()); !errors.Is(err, os.ErrNoDeadline) {
		t.Fatalf("a blocking pipe took a deadline (%v): the test does not start from blocking mode", err)
	}
	pr := Pollable(r)
	handedOver = append(handedOver, pr)
	// Only a file in the poller takes a deadline; a read past it returns
	// at once rather than holding its thread.
	if err := pr.SetReadDeadline(time.Now().Add(10 * time.Millisecond)); err != nil {
		t.Fatalf("the pollable pipe refused a deadline: %v", err)
	}
	if _, err := pr.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read of an empty pollable pipe: %v, want a deadline error", err)
	}
	if err := pr.SetReadDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	pw := Pollable(w)
	handedOver = append(handedOver, pw)
	if _, err := pw.Write([]byte("x\n")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	if n, err := pr.Read(buf); err != nil || string(buf[:n]) != "x\n" {
		t.Fatalf("read %q, %v; want the line written", buf[:n], err)
	}
}

func TestARegularFileIsLeftAsItIs(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got := Pollable(f); got != f {
		t.Fatal("a regular file was replaced")
	}
	flags, err := unix.FcntlInt(f.Fd(), unix.F_GETFL, 0)
	if err != nil {
		t.Fatal(err)
	}
	if flags&unix.O_NONBLOCK != 0 {
		t.Fatal("a regular file was put in non-blocking mode")
	}
}
