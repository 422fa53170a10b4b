package rawio

import (
	"bytes"
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// loopbackPair is a TCP connection on 127.0.0.1: the accepted end raw.
func loopbackPair(t *testing.T) (raw net.Conn, peer net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	peer, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c := <-accepted
	if c == nil {
		t.Fatal("accept failed")
	}
	raw = NewConn(c)
	if _, ok := raw.(*Conn); !ok {
		t.Fatalf("NewConn of a TCP connection returned %T", raw)
	}
	t.Cleanup(func() { raw.Close(); peer.Close() })
	return raw, peer
}

// A raw connection reads, writes and ends as net.Conn does, its errors
// those net's callers (net/http) test for.
func TestConnBehavesAsNetConn(t *testing.T) {
	raw, peer := loopbackPair(t)

	// A write far larger than the socket's buffers waits in the poller
	// while the peer drains it.
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<18) // 4 MiB
	got := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(peer, int64(len(big))))
		got <- b
	}()
	if n, err := raw.Write(big); err != nil || n != len(big) {
		t.Fatalf("write: %d, %v", n, err)
	}
	if b := <-got; !bytes.Equal(b, big) {
		t.Fatalf("the peer read %d bytes, not what was written", len(b))
	}

	if _, err := peer.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	if n, err := raw.Read(buf); err != nil || string(buf[:n]) != "ping" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}

	// A deadline ends a waiting read with a timeout, and the connection
	// still serves the next read.
	if err := raw.SetReadDeadline(time.Now().Add(20 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	_, err := raw.Read(buf)
	var ne net.Error
	var op *net.OpError
	if !errors.As(err, &ne) || !ne.Timeout() || !errors.As(err, &op) || op.Op != "read" {
		t.Fatalf("read past the deadline: %v, want a net.OpError read timeout", err)
	}
	if err := raw.SetReadDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	if _, err := peer.Write([]byte("again")); err != nil {
		t.Fatal(err)
	}
	if n, err := raw.Read(buf); err != nil || string(buf[:n]) != "again" {
		t.Fatalf("read after the deadline: %q, %v", buf[:n], err)
	}

	// The peer's half-close is io.EOF, and CloseWrite reaches the socket.
	if err := peer.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Read(buf); err != io.EOF {
		t.Fatalf("read after the peer's half-close: %v, want io.EOF", err)
	}
	if err := raw.(*Conn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	if n, err := peer.Read(buf); n != 0 || err != io.EOF {
		t.Fatalf("the peer read %d, %v after CloseWrite; want io.EOF", n, err)
	}

	// A read waiting when the connection closes ends with net.ErrClosed.
	raw2, _ := loopbackPair(t)
	done := make(chan error, 1)
	go func() {
		_, err := raw2.Read(buf)
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	raw2.Close()
	if err := <-done; !errors.Is(err, net.ErrClosed) {
		t.Fatalf("read across Close: %v, want net.ErrClosed", err)
	}
	if _, err := raw2.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("write after Close: %v, want net.ErrClosed", err)
	}
}

// Anything that is not a socket of this process is returned as it is.
func TestNewConnLeavesOtherConns(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if c := NewConn(a); c != a {
		t.Fatalf("NewConn(net.Pipe) = %T, want it unchanged", c)
	}
}
