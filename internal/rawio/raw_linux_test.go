package rawio

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A pipe from os.Pipe is in the poller: Raw reads and writes it with raw
// system calls, which wait in the poller as os.File's do.
func TestRawPipeReadsAndWrites(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	rr, rw := Raw(r), Raw(w)
	if rr.rc == nil || rw.rc == nil {
		t.Fatal("a pipe in the poller was not made raw")
	}
	// More than the pipe holds: the write waits in the poller for the
	// reader, then goes on where it stopped.
	want := bytes.Repeat([]byte("0123456789abcdef"), 64<<10)
	wrote := make(chan error, 1)
	go func() {
		n, err := rw.Write(want)
		if err == nil && n != len(want) {
			err = io.ErrShortWrite
		}
		wrote <- err
		rw.Close()
	}()
	got, err := io.ReadAll(rr) // io.EOF once the writer closed
	if err != nil {
		t.Fatal(err)
	}
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes, want the %d written", len(got), len(want))
	}
	rr.Close()
}

// A raw read honours a deadline, and a closed file fails a read and a write
// with an error rather than a hang.
func TestRawPipeDeadlineAndClose(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	rr, rw := Raw(r), Raw(w)
	if err := rr.SetReadDeadline(time.Now().Add(10 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if _, err := rr.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read of an empty pipe past its deadline: %v", err)
	}
	if err := rr.SetReadDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	read := make(chan error, 1)
	go func() {
		_, err := rr.Read(make([]byte, 1))
		read <- err
	}()
	time.Sleep(10 * time.Millisecond) // the read waits in the poller
	rr.Close()
	select {
	case err := <-read:
		if err == nil {
			t.Fatal("a read of a closed pipe succeeded")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a read waiting on a pipe did not end when it was closed")
	}
	if _, err := rw.Write([]byte("x")); err == nil {
		t.Fatal("a write to a pipe whose reader closed succeeded")
	}
	rw.Close()
	if _, err := rw.Write([]byte("x")); err == nil {
		t.Fatal("a write to a closed pipe succeeded")
	}
}

// A blocking pipe is left to os.File: a raw call on it would hold the
// thread without the runtime knowing, for as long as the other end waits.
func TestRawLeavesBlockingPipesAlone(t *testing.T) {
	r, _ := blockingPipe(t)
	if Raw(r).rc != nil {
		t.Error("a blocking pipe was made raw")
	}
}

// A regular file is written and read raw, a write appending where the file
// was opened to append.
func TestRawRegularFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, []byte("kept\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rf := Raw(f)
	if rf.rc == nil {
		t.Fatal("a regular file was not made raw")
	}
	if n, err := rf.Write([]byte("appended\n")); err != nil || n != len("appended\n") {
		t.Fatalf("wrote %d, %v", n, err)
	}
	rd, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	got, err := io.ReadAll(Raw(rd))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "kept\nappended\n" {
		t.Fatalf("read %q", got)
	}
	rf.Close()
	if _, err := rf.Write([]byte("x")); err == nil {
		t.Fatal("a write to a closed file succeeded")
	}
}

// ReadAt reads at an offset with one pread, says io.EOF past the end, and
// reads a kernel-written file anew each time from its start.
func TestReadAt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 8)
	if n, err := ReadAt(f, buf, 1); err != nil || string(buf[:n]) != "ello" {
		t.Fatalf("ReadAt(1) = %q, %v", buf[:n], err)
	}
	if n, err := ReadAt(f, buf, 5); n != 0 || err != io.EOF {
		t.Fatalf("ReadAt past the end = %d, %v", n, err)
	}
	statm, err := os.Open("/proc/self/statm")
	if err != nil {
		t.Skip(err)
	}
	defer statm.Close()
	for range 2 {
		if n, err := ReadAt(statm, buf, 0); err != nil || n == 0 {
			t.Fatalf("statm: %d, %v", n, err)
		}
	}
}
