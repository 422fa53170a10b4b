package testfixture

import (
	"net"
	"sync"
	"testing"
)

// HangingListener accepts connections on loopback and answers nothing
// until released (or the test ends): a server that hangs. accepted gets a
// value per connection (dropped past 64 waiting).
func HangingListener(t testing.TB) (url string, accepted <-chan struct{}, release func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	acc := make(chan struct{}, 64)
	done := make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(done); _ = ln.Close() }) }
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			select {
			case acc <- struct{}{}:
			default:
			}
			go func() {
				<-done
				_ = c.Close()
			}()
		}
	}()
	t.Cleanup(release)
	return "http://" + ln.Addr().String(), acc, release
}
