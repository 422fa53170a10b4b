// Package stdioorder is the package's stdout as its MCP client needs it:
// a progress notification and the message after it reach the client in
// separate reads.
//
// The official TypeScript SDK client (and the clients built on it) handles
// a notification on a later tick than a response read in the same chunk: a
// request's last progress notification that arrives together with its
// answer finds the request gone and is dropped as a protocol error, which
// some clients treat as a broken transport. So after a progress
// notification, the next message waits until the client has read what was
// written, within a bound.
package stdioorder

import (
	"bytes"
	"time"

	"github.com/pml-go/pml/internal/rawio"
)

// DefaultWait bounds how long a message waits for the client to read the
// progress notification before it: a client that reads nothing for that
// long is busy, and holding the answer longer would not help it.
const DefaultWait = 200 * time.Millisecond

// Writer writes MCP messages, one per Write (as the SDK's stdio transport
// writes them), to f. Its Writes must not overlap (the transport serializes
// them). Close leaves f open: the process owns its stdout.
type Writer struct {
	f    *rawio.File
	wait time.Duration
	// unread is how many bytes written to f the reader has not taken yet;
	// false when that cannot be known for f.
	unread func() (int, bool)
	// afterProgress: the last message was a progress notification.
	afterProgress bool
}

// New returns a Writer on f that waits at most wait (DefaultWait when 0).
func New(f *rawio.File, wait time.Duration) *Writer {
	if wait <= 0 {
		wait = DefaultWait
	}
	return &Writer{f: f, wait: wait, unread: unreadFunc(f.File)}
}

// Write writes one message, first waiting for the client to read a
// progress notification written before it.
func (w *Writer) Write(p []byte) (int, error) {
	if w.afterProgress {
		w.awaitRead()
	}
	n, err := w.f.Write(p)
	// The encoded message holds this exact text only as its own method
	// (inside a string the quotes would be escaped); a result that echoes it
	// as data costs one wait, nothing more.
	w.afterProgress = bytes.Contains(p, []byte(`"method":"notifications/progress"`))
	return n, err
}

// Close implements io.Closer and leaves the file open.
func (w *Writer) Close() error { return nil }

// awaitRead waits until the reader has taken everything written, within
// w.wait. Where that cannot be known it pauses briefly instead, which gives
// a reader waiting on its input the time to take the notification alone.
func (w *Writer) awaitRead() {
	deadline := time.Now().Add(w.wait)
	pause := 50 * time.Microsecond
	for {
		n, known := w.unread()
		if !known {
			time.Sleep(unknownPause)
			return
		}
		if n == 0 || time.Now().After(deadline) {
			return
		}
		time.Sleep(pause)
		pause = min(2*pause, 2*time.Millisecond)
	}
}

// unknownPause is the pause where the reader's progress cannot be seen.
const unknownPause = 5 * time.Millisecond
