//go:build linux

package stdioorder

import (
	"github.com/pml-go/pml/internal/rawio"
	"os"
	"syscall"
	"testing"
	"time"
)

const (
	progress = `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1,"total":1}}` + "\n"
	answer   = `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}` + "\n"
)

// socketPair is a connected unix socket pair as files, the way Node gives a
// child process its stdio.
func socketPair(t *testing.T) (r, w *os.File) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	r, w = os.NewFile(uintptr(fds[0]), "r"), os.NewFile(uintptr(fds[1]), "w")
	t.Cleanup(func() { _ = r.Close(); _ = w.Close() })
	return r, w
}

func pipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close(); _ = w.Close() })
	return r, w
}

// A message written after a progress notification waits until the reader
// has read the notification, so a reader that comes late still reads the
// notification alone; a message after any other message does not wait.
func TestAnswerAfterProgressComesInANewRead(t *testing.T) {
	for _, c := range []struct {
		name string
		open func(*testing.T) (*os.File, *os.File)
	}{{"pipe", pipe}, {"socket", socketPair}} {
		t.Run(c.name, func(t *testing.T) {
			r, f := c.open(t)
			w := New(rawio.Raw(f), time.Minute) // the reader decides here, not the bound
			wrote := make(chan error, 1)
			go func() {
				if _, err := w.Write([]byte(progress)); err != nil {
					wrote <- err
					return
				}
				_, err := w.Write([]byte(answer))
				wrote <- err
			}()
			// A writer that did not wait has written both by now.
			time.Sleep(100 * time.Millisecond)
			select {
			case err := <-wrote:
				t.Fatalf("the answer went out before the notification was read (%v)", err)
			default:
			}
			buf := make([]byte, 4096)
			n, err := r.Read(buf)
			if err != nil || string(buf[:n]) != progress {
				t.Fatalf("first read %q %v, want the notification alone", buf[:n], err)
			}
			if err := <-wrote; err != nil {
				t.Fatal(err)
			}
			n, err = r.Read(buf)
			if err != nil || string(buf[:n]) != answer {
				t.Fatalf("second read %q %v, want the answer", buf[:n], err)
			}

			// Without a notification before it, nothing waits.
			if _, err := w.Write([]byte(answer)); err != nil {
				t.Fatal(err)
			}
			if _, err := w.Write([]byte(answer)); err != nil {
				t.Fatal(err)
			}
			n, err = r.Read(buf)
			if err != nil || string(buf[:n]) != answer+answer {
				t.Fatalf("read %q %v, want both answers at once", buf[:n], err)
			}
		})
	}
}

// A reader that takes nothing holds the next message up to the bound only.
func TestWaitIsBounded(t *testing.T) {
	r, f := socketPair(t)
	w := New(rawio.Raw(f), 50*time.Millisecond)
	if _, err := w.Write([]byte(progress)); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := w.Write([]byte(answer))
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the answer waited past its bound")
	}
	buf := make([]byte, 4096)
	n, err := r.Read(buf)
	if err != nil || string(buf[:n]) != progress+answer {
		t.Fatalf("read %q %v", buf[:n], err)
	}
}
